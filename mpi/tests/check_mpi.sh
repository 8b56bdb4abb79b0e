#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mpi/tests/check_mpi.sh - the MPI layer's tests on localhost (make check-mpi):
# the unit tests (test_mpi, test_mpi_stats) at 1, 2 and 4 ranks, the life-cycle test (MPI initialised
# by mkrt) at 1, 2 and 3, the distributed engine's test at 1 to 4, the
# allocation sweep at 1 and 3, graph_bfs's
# distributed mode at 1, 2 and 4, then the fault
# tests (killed rank, silent rank, MPI errors) at 3 ranks. Needs MPIRUN
# (mpirun and its flags) and BUILD.
set -u
BUILD=${BUILD:-build}
MPIRUN=${MPIRUN:-mpirun --oversubscribe}
BOUND=${MKRT_MPI_FAULT_BOUND:-60}
fail=0
for np in 1 2 4; do
  echo "== $BUILD/mpi/tests/test_mpi on $np rank(s)"
  if ! timeout -k 5 300 $MPIRUN -np $np "$BUILD/mpi/tests/test_mpi"; then
    echo "FAIL: test_mpi on $np rank(s)"; fail=1
  fi
done
for np in 1 2 4; do
  echo "== $BUILD/mpi/tests/test_mpi_stats on $np rank(s)"
  if ! timeout -k 5 120 $MPIRUN -np $np "$BUILD/mpi/tests/test_mpi_stats"; then
    echo "FAIL: test_mpi_stats on $np rank(s)"; fail=1
  fi
done
# MPI initialised by mkrt: failed creates, create after destroy, finalising.
for np in 1 2 3; do
  echo "== $BUILD/mpi/tests/test_mpi_lifecycle on $np rank(s)"
  if ! timeout -k 5 120 $MPIRUN -np $np "$BUILD/mpi/tests/test_mpi_lifecycle"; then
    echo "FAIL: test_mpi_lifecycle on $np rank(s)"; fail=1
  fi
done
# The distributed engine (mpi/graph/, mkrt_mpi/graph.h) against a serial
# BFS and Dijkstra, and its bad-input errors.
for np in 1 2 3 4; do
  echo "== $BUILD/mpi/tests/test_mpi_graph on $np rank(s)"
  if ! timeout -k 5 300 $MPIRUN -np $np "$BUILD/mpi/tests/test_mpi_graph"; then
    echo "FAIL: test_mpi_graph on $np rank(s)"; fail=1
  fi
done
# Allocation failure: through the layer and the engine at one rank; at
# three, mkrt_mpi_create refused memory on one rank fails on all alike.
for np in 1 3; do
  echo "== $BUILD/mpi/tests/test_mpi_alloc on $np rank(s)"
  if ! timeout -k 5 300 $MPIRUN -np $np "$BUILD/mpi/tests/test_mpi_alloc"; then
    echo "FAIL: test_mpi_alloc on $np rank(s)"; fail=1
  fi
done
for np in 1 2 4; do
  echo "== distributed graph_bfs on $np rank(s): scale 12, 4 roots, block partition"
  if ! timeout -k 5 300 $MPIRUN -np $np "$BUILD/examples/graph_bfs" --scale 12 --roots 4; then
    echo "FAIL: graph_bfs on $np rank(s)"; fail=1
  fi
done
# One rank runs the runtime's traversals (mpi/graph/local.c); TMPI_LOCAL=0
# (graph_bfs: mkrt_mpi_graph_config::own_rounds) keeps the engine's own
# rounds there: both are checked.
echo "== distributed graph_bfs on 1 rank with the engine's own rounds (TMPI_LOCAL=0)"
if ! TMPI_LOCAL=0 timeout -k 5 300 $MPIRUN -x TMPI_LOCAL -np 1 "$BUILD/examples/graph_bfs" --scale 12 --roots 4; then
  echo "FAIL: graph_bfs on 1 rank, TMPI_LOCAL=0"; fail=1
fi
echo "== distributed graph_bfs on 4 ranks, hash partition"
if ! MKRT_MPI_PARTITION=hash timeout -k 5 300 $MPIRUN -x MKRT_MPI_PARTITION -np 4 \
    "$BUILD/examples/graph_bfs" --scale 12 --roots 2; then
  echo "FAIL: graph_bfs, hash partition"; fail=1
fi
echo "== distributed graph_bfs on 4 ranks at scale 16 (4 roots): the acceptance run"
if ! timeout -k 5 600 $MPIRUN -np 4 "$BUILD/examples/graph_bfs" --scale 16 --roots 4; then
  echo "FAIL: graph_bfs at scale 16 on 4 ranks"; fail=1
fi
# A failing rank ends the job with an error within $BOUND s, never a hang.
for mode in kill stall mpierr-send mpierr-coll; do
  echo "== fault: $mode (rank 1 of 3); the job must fail within ${BOUND} s"
  out=$(mktemp)
  t0=$(date +%s)
  timeout -k 5 "$BOUND" $MPIRUN -np 3 "$BUILD/mpi/tests/test_mpi_fault" $mode >"$out" 2>&1
  rc=$?
  t=$(( $(date +%s) - t0 ))
  sed 's/^/  | /' "$out" | head -n 20
  if [ $rc -eq 0 ]; then echo "FAIL: $mode: the job completed"; fail=1
  # (mpirun itself exits 137 when a rank died of SIGKILL: tell by the time)
  elif [ $t -ge "$BOUND" ]; then echo "FAIL: $mode: the job hung (${BOUND} s)"; fail=1
  elif [ $mode = stall ] && ! grep -q "mkrt_mpi: rank .* waited 1500 ms for the other ranks" "$out"; then
    echo "FAIL: stall: no mkrt_mpi timeout message"; fail=1
  elif [ $mode = mpierr-send ] && ! grep -q "mkrt_mpi: rank 1 of 3: MPI_Isend (peer rank [02]) failed: MPI_ERR_TAG.*ending the job" "$out"; then
    echo "FAIL: mpierr-send: no mkrt_mpi message naming the rank, MPI_Isend and MPI's error"; fail=1
  elif [ $mode = mpierr-coll ] && ! grep -q "mkrt_mpi: rank 1 of 3: MPI_Iallreduce (peer rank -1) failed: MPI_ERR_COUNT.*ending the job" "$out"; then
    echo "FAIL: mpierr-coll: no mkrt_mpi message naming the rank, MPI_Iallreduce and MPI's error"; fail=1
  else echo "ok: $mode: the job ended with exit status $rc after ${t} s"; fi
  rm -f "$out"
done
[ $fail -eq 0 ] && echo "check-mpi: all passed" || echo "check-mpi: FAILED"
exit $fail
