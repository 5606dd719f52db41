# broker/: grants, budgets, decisions, effect handlers, journal (trusted;
# docs/broker.md).
libworld_a_SOURCES += broker/handler.h broker/grants.c broker/grants.h broker/session.c broker/session.h \
	broker/plan.c broker/plan.h broker/effect.c broker/effect.h broker/handlers.c

# Effect handlers (broker/handler.h): the shared helpers and the workspace.
libworld_a_SOURCES += broker/handler.c broker/workspace.c broker/workspace.h broker/turn.c broker/turn.h

check_PROGRAMS += tests/broker/test_workspace
TESTS += tests/broker/test_workspace
tests_broker_test_workspace_SOURCES = tests/broker/test_workspace.c tests/broker/se_schemas.h
tests_broker_test_workspace_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_broker_test_workspace_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread

# The Ailang.* handlers (tool runs through the supervisor, docs/broker.md).
libworld_a_SOURCES += broker/ailang_tools.c broker/ailang_tools.h
check_PROGRAMS += tests/broker/test_ailang_tools
TESTS += tests/broker/test_ailang_tools
tests_broker_test_ailang_tools_SOURCES = tests/broker/test_ailang_tools.c tests/broker/se_schemas.h
tests_broker_test_ailang_tools_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_broker_test_ailang_tools_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread

# Workspace.Exec: the operator's exec profiles and the args grammar (docs/exec.md).
libworld_a_SOURCES += broker/exec_profile.c broker/exec_profile.h broker/exec.c broker/exec.h broker/exec_probe.c broker/exec_probe.h
check_PROGRAMS += tests/broker/test_exec_profile
TESTS += tests/broker/test_exec_profile
tests_broker_test_exec_profile_SOURCES = tests/broker/test_exec_profile.c tests/broker/exec_fixture.h
tests_broker_test_exec_profile_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_broker_test_exec_profile_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
check_PROGRAMS += tests/broker/test_exec
TESTS += tests/broker/test_exec
tests_broker_test_exec_SOURCES = tests/broker/test_exec.c tests/broker/exec_fixture.h
tests_broker_test_exec_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_broker_test_exec_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread

# The broker's own rules at its level, over a real store (docs/broker.md):
# grants and budgets, visibility, the plan laws, the record law.
check_PROGRAMS += tests/broker/test_grants
TESTS += tests/broker/test_grants
tests_broker_test_grants_SOURCES = tests/broker/test_grants.c tests/broker/broker_fixture.h
tests_broker_test_grants_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_broker_test_grants_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
check_PROGRAMS += tests/broker/test_plan_laws
TESTS += tests/broker/test_plan_laws
tests_broker_test_plan_laws_SOURCES = tests/broker/test_plan_laws.c tests/broker/broker_fixture.h
tests_broker_test_plan_laws_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_broker_test_plan_laws_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
check_PROGRAMS += tests/broker/test_record
TESTS += tests/broker/test_record
tests_broker_test_record_SOURCES = tests/broker/test_record.c tests/broker/broker_fixture.h
tests_broker_test_record_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_broker_test_record_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
check_PROGRAMS += tests/broker/test_visibility
TESTS += tests/broker/test_visibility
tests_broker_test_visibility_SOURCES = tests/broker/test_visibility.c tests/broker/broker_fixture.h
tests_broker_test_visibility_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_broker_test_visibility_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS) -lpthread
