source scripts/gpu-env.sh
# Session 19 call b: ca0096c on graphs pre-sorted by (dst, etype) against
# the generated order, three models, both modes, am, mag, wikikg2.
# .devcmd/order_bench.py is experiments/order_bench.py.
nvidia-smi -L
VARIANT_JOBS=16 bash bench/build-variant.sh main "" . > $OUT/build-main.log 2>&1; tail -1 $OUT/build-main.log
export PYTHONPATH=$PWD/runtime/python HECTOR_BUILD_DIR=$PWD/build-main
timeout 420 python3 .devcmd/order_bench.py am,mag,wikikg2 rgcn,rgat,hgt orig,dst,orig 2>&1 | tee $OUT/order.jsonl | tail -80
