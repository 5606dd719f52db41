# tests/escape/: the capsule escape suite (docs/escape-suite.md) is `worldd
# audit` (audit/); these tests run it and turn its report into TAP. The
# probe is audit/world-probe (audit/local.mk).
ESCAPE_TESTS = tests/escape/audit.sh tests/escape/audit_spawner.sh tests/escape/audit_fails.sh tests/escape/audit_groups.sh \
	tests/escape/profile_proc.sh
TESTS += $(ESCAPE_TESTS)
EXTRA_DIST += $(ESCAPE_TESTS) tests/escape/lib.sh tests/escape/unconfined-run.sh
