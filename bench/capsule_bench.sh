#!/bin/sh
# bench/capsule_bench.sh: confined no-op vs unconfined vs bubblewrap,
# interleaved (see bench/capsule_bench.c). N=${CAPSULE_BENCH_N:-300}.
b=${top_builddir:-.}
"$b/bench/capsule_bench" "$b/bench/capsule_noop" "$(command -v bwrap || true)" "${CAPSULE_BENCH_N:-300}"
