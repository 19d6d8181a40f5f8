#!/usr/bin/env bash
# Prepared in session 45 for the next session's device time (not run):
# main with experiments/idx-ahead.diff applied (branch s45-idx-ahead) as
# `new`, main as `old` (.devcmd/main: git archive main | tar -x -C
# .devcmd/main). The builds, checks and speed runs are those of session
# 45's call a (scripts/s45a.sh, which measured the ring-ahead variant the
# same way), so this runs that script on the tree it is given.
exec bash "$(dirname "$0")/../scripts/s45a.sh"
