# daemon/: `worldd serve` -- the HTTP server, the read routes, the MCP and
# A2A projections over the coordinator (docs/daemon.md).
libworld_a_SOURCES += daemon/server.c daemon/server.h daemon/server_internal.h daemon/workers.c daemon/edge.c daemon/http.c daemon/http.h daemon/route.h daemon/reads.c daemon/mcp.c daemon/a2a.c \
	daemon/replay_route.c daemon/stream.c daemon/calls.c daemon/home.c daemon/home.h daemon/a2a_push.c daemon/a2a_push.h \
	daemon/mcp_input.c daemon/mcp_input.h

# Tests: the fixture sets up sessions and registries through the store API.
check_PROGRAMS += tests/daemon/fixture
tests_daemon_fixture_SOURCES = tests/daemon/fixture.c
tests_daemon_fixture_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_daemon_fixture_LDADD = libworld.a $(WORLD_DEP_LIBS)
TESTS += tests/daemon/serve.sh tests/daemon/sdk.sh tests/daemon/auth.sh tests/daemon/mcp2026.sh tests/daemon/load.sh tests/daemon/memory.sh tests/daemon/share.sh tests/daemon/live.sh tests/daemon/pg_serve.sh tests/daemon/pg_multi.sh
EXTRA_DIST += tests/daemon/pg_serve.sh tests/daemon/pg_multi.sh tests/daemon/serve.sh tests/daemon/sdk.sh tests/daemon/auth.sh tests/daemon/mcp2026.sh tests/daemon/sdk-v2.mjs tests/daemon/load.sh tests/daemon/memory.sh tests/daemon/share.sh tests/daemon/live.sh tests/daemon/sdk-clients.mjs tests/daemon/lib.sh tests/daemon/notobject.ail tests/daemon/slow.ail tests/daemon/identity.ail
# round trips to PostgreSQL per call, counted by the driver (issue 44 item 1)
TESTS += tests/daemon/pg_rtt.sh
EXTRA_DIST += tests/daemon/pg_rtt.sh
# scoped reads: two episodes, every read route walked with the other's credential
TESTS += tests/daemon/scoped.sh
EXTRA_DIST += tests/daemon/scoped.sh
# prompts, package resources, completion, content items (issue 41 item 2)
TESTS += tests/daemon/prompts.sh
EXTRA_DIST += tests/daemon/prompts.sh tests/daemon/sdk-prompts.mjs
# A2A push notifications to loopback webhooks, the extended card (@a2a-js/sdk)
TESTS += tests/daemon/a2a_push.sh
EXTRA_DIST += tests/daemon/a2a_push.sh tests/daemon/a2a-push.mjs tests/daemon/a2a-hook.mjs
TESTS += tests/daemon/optoken.sh tests/daemon/backup.sh tests/daemon/turns.sh tests/daemon/home.sh
EXTRA_DIST += tests/daemon/optoken.sh tests/daemon/backup.sh tests/daemon/turns.sh tests/daemon/home.sh
# the HTTP edge: Origin/Host, framing, health, slow clients (trickle.py floods from 127.0.0.2)
TESTS += tests/daemon/edge.sh
EXTRA_DIST += tests/daemon/edge.sh tests/daemon/trickle.py
# The hostile interpreter behind the daemon (issue 23, item 3; test hooks).
TESTS += tests/daemon/hostile.sh tests/daemon/nul.sh
EXTRA_DIST += tests/daemon/hostile.sh tests/daemon/nul.sh
# The MCP tool name map is one-to-one (docs/design.md §7).
check_PROGRAMS += tests/daemon/test_toolname
TESTS += tests/daemon/test_toolname
tests_daemon_test_toolname_SOURCES = tests/daemon/test_toolname.c
tests_daemon_test_toolname_CFLAGS = $(AM_CFLAGS) $(WORLD_DEP_CFLAGS)
tests_daemon_test_toolname_LDADD = libworld.a tests/libtap.a $(WORLD_DEP_LIBS)
# Denials are attributable (issue 25, item 4): the denied line, the record, journal --denials.
TESTS += tests/daemon/denials.sh
EXTRA_DIST += tests/daemon/denials.sh
# GET /mcp/, the notification stream (issue 20 item 2): SDK clients and curl.
TESTS += tests/daemon/stream.sh
EXTRA_DIST += tests/daemon/stream.sh tests/daemon/sdk-notify.mjs tests/daemon/sdk-reconnect.mjs
# Cancellation and progress (issue 22 item 4): the MCP SDK's AbortSignal and onprogress.
TESTS += tests/daemon/cancel.sh
EXTRA_DIST += tests/daemon/cancel.sh tests/daemon/sdk-cancel.mjs
# A call cancelled while it waits for a call worker (pending cancels; test hooks).
TESTS += tests/daemon/cancel_queued.sh
EXTRA_DIST += tests/daemon/cancel_queued.sh
# The official MCP conformance suite with packages/conformance published (issue 22 item 8).
TESTS += tests/daemon/conformance.sh
EXTRA_DIST += tests/daemon/conformance.sh tests/daemon/conformance-proxy.mjs tests/daemon/conformance-baseline.yml tests/daemon/conformance-next-baseline.yml \
	tests/daemon/conformance-tasks-baseline.yml
# workspace-exec end to end (docs/exec.md)
TESTS += tests/daemon/exec.sh
EXTRA_DIST += tests/daemon/exec.sh
# The verifiable log over HTTP and the CLI (issue 43): key init attended,
# checkpoints per batch, receipts, scoped proofs, world-verify and Go.
TESTS += tests/daemon/logtree.sh
EXTRA_DIST += tests/daemon/logtree.sh
# A write refused for budget is a refusal (issue 44 item 5): isError, the budget named.
TESTS += tests/daemon/budget.sh
EXTRA_DIST += tests/daemon/budget.sh
# input_required (multi round-trip requests, issue 41 item 2): a descriptor's inputRequests.
TESTS += tests/daemon/input_required.sh
EXTRA_DIST += tests/daemon/input_required.sh tests/daemon/input_required.json tests/daemon/replace.ail tests/daemon/sdk-input.mjs
# The MCP Tasks extension (SEP-2663): calls as tasks (daemon/mcp_tasks.h).
libworld_a_SOURCES += daemon/mcp_tasks.c daemon/mcp_tasks.h
# Tasks over curl, and what a listen is told of tasks and package resources.
TESTS += tests/daemon/tasks.sh
EXTRA_DIST += tests/daemon/tasks.sh
# The MCP Inspector's CLI (@modelcontextprotocol/inspector) against the daemon.
TESTS += tests/daemon/inspector.sh
EXTRA_DIST += tests/daemon/inspector.sh
