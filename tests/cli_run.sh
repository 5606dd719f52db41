#!/bin/bash
. "$top_srcdir/tests/tap.sh"
done_testing
