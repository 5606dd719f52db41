# broker/: grants, budgets, decisions, effect handlers, journal (trusted;
# docs/broker.md).
libworld_a_SOURCES += broker/handler.h broker/grants.c broker/grants.h broker/session.c broker/session.h \
	broker/plan.c broker/plan.h broker/effect.c broker/effect.h broker/handlers.c
