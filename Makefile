# ros2_ik developer commands. Every target installs what it needs (make setup) first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
ENV := source tools/env.sh &&
PYTEST_ARGS ?=

.PHONY: setup extras build dispatch test test-long lint docs demo bench bench-quick \
	servo-bench bench-path bench-batch bench-analytic bench-sweep bench-ab bench-unreachable fuzz \
	completeness load clean bench-wholebody bench-import bench-seven-r bench-paired bench-held bench-blocked \
	bench-inner bench-rotation-box bench-timing

setup:
	@bash tools/setup.sh

# Optional features: ray (batch IK on Ray) and matplotlib (reach's PNG), pinned by the lock.
extras: setup
	@.venv/bin/python -m pip install --quiet --disable-pip-version-check \
		-r requirements-extras.txt -c requirements.lock 2>&1 | { grep -v "is ignored" || true; }

build: setup
	@bash tools/build.sh

# The compiled dispatch (core/solvers/_dispatch_jit.py) from the type registry
# (core/constraints/registry.py), from the sources: after a type is added to the registry.
# Then the compiled LM loops (core/solvers/_lm_jit.py) from their skeleton
# (_lm_jit.py.in) and the row families (lm_source.py): after an edit of either.
dispatch: setup
	@$(ENV) PYTHONPATH="$(CURDIR)/ros2_ik$${PYTHONPATH:+:$$PYTHONPATH}" \
		python -m ros2_ik.core.solvers.dispatch_source
	@$(ENV) PYTHONPATH="$(CURDIR)/ros2_ik$${PYTHONPATH:+:$$PYTHONPATH}" \
		python -m ros2_ik.core.solvers.lm_source

# Two workers, one test file each at a time (module fixtures start their node once); each
# worker on its own DDS domain (test/conftest.py). test-long: the tests marked long.
TEST := python -m pytest ros2_ik/test -q -rs -p no:cacheprovider -n 2 --dist loadfile
test: build
	@$(ENV) $(TEST) -m "not long" $(PYTEST_ARGS)

test-long: build
	@$(ENV) $(TEST) -m long $(PYTEST_ARGS)

# flake8 at 99 columns and pep257 docstrings, as ament_flake8 / ament_pep257 (tools/lint.sh).
lint: setup
	@$(ENV) bash tools/lint.sh

# The docs and the API reference (Sphinx, warnings as errors) into docs/_build/html.
docs: build
	@$(ENV) pip install --quiet --disable-pip-version-check -r docs/requirements.txt 2>&1 \
		| { grep -v "is ignored" || true; } \
	&& bash tools/docs.sh

demo: build
	@$(ENV) "$$(python -c 'from ament_index_python.packages import get_package_prefix as g; print(g("ros2_ik"))')/lib/ros2_ik/ik_demo"

# Benchmarks (not timed tests): figures go to bench/results/.
# ik_bench.py rewrites results/latest.json; collision_bench.py then adds its panda_scene rows;
# constrained_bench.py (our solvers vs Drake SNOPT / IPOPT) writes results/constrained.*, and
# with --other-arms (lm vs SNOPT on 7 arms the families were not built on)
# results/constrained_other_arms/;
# servo_bench.py (the servo step vs Pink, ~1 min) results/servo.*; servo_node_bench.py
# (the node's loop, 60 s) results/servo_node.*; wholebody_bench.py (ros2_ik, Drake SNOPT and
# Pink on whole-body problems) results/wholebody.*.
bench: build
	@$(ENV) pip install --quiet -r bench/requirements-bench.txt \
		-r bench/requirements-collision.txt -r bench/requirements-servo.txt 2>&1 \
		| { grep -v "is ignored" || true; } \
	&& python bench/ik_bench.py $(BENCH_ARGS) && python bench/collision_bench.py $(BENCH_ARGS) \
	&& python bench/constrained_bench.py $(BENCH_ARGS) \
	&& python bench/constrained_bench.py --other-arms $(BENCH_ARGS) \
	&& python bench/servo_bench.py $(BENCH_ARGS) \
	&& python bench/servo_node_bench.py $(BENCH_ARGS) && python bench/path_bench.py $(BENCH_ARGS) \
	&& python bench/wholebody_bench.py $(BENCH_ARGS) && python tools/bench_readme.py

bench-quick: BENCH_ARGS += --quick
bench-quick: bench

# Servo step (core.servo) vs Pink, interleaved: results/servo.{json,md,png}; then the node's
# 250 Hz loop for 60 s on a simulated arm: results/servo_node.*, and on talos's whole body
# (soles, CoM, a hand): results/servo_node_wholebody.*.  The first two in make bench too.
# BENCH_ARGS=--quick: one lap per task, 10 s of the node.
servo-bench: build
	@$(ENV) pip install --quiet -r bench/requirements-servo.txt 2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/servo_bench.py $(BENCH_ARGS) && python bench/servo_node_bench.py $(BENCH_ARGS) \
	&& python bench/servo_node_bench.py --whole-body $(BENCH_ARGS) && python tools/bench_readme.py

# IK along Cartesian paths (solve_path vs sequential per-pose IK, ours and TRAC-IK Distance):
# results/path.{json,md,png}.  In make bench too.  BENCH_ARGS=--quick: a few paths per arm.
bench-path: build
	@$(ENV) pip install --quiet -r bench/requirements-bench.txt 2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/path_bench.py $(BENCH_ARGS)

# Timed paths (what the node sends) against TOPP-RA's time optimum, limits sampled:
# results/timing.{json,md,png}. BENCH_ARGS=--quick: two arms, 2 paths per kind.
bench-timing: build
	@$(ENV) pip install --quiet -r bench/requirements-bench.txt 2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/timing_bench.py $(BENCH_ARGS)

# Targets beyond the reach bound (issue 48): solve() beside the search alone and TRAC-IK on
# every arm (catalogue, random, vendor): results/unreachable.*. BENCH_ARGS=--quick: 5 targets.
bench-unreachable: build
	@$(ENV) pip install --quiet -r bench/requirements-bench.txt 2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/unreachable_bench.py $(BENCH_ARGS)

# Whole-body IK (issue 47): ros2_ik, Drake SNOPT and Pink on humanoids, quadrupeds, mobile
# manipulators and b1_z1, interleaved: results/wholebody.{json,md,png} and the table of
# docs/whole_body_benchmark.md.
# BENCH_ARGS=--quick: 10 problems per robot (~1-2 min).
bench-wholebody: build
	@$(ENV) pip install --quiet -r bench/requirements-collision.txt -r bench/requirements-servo.txt \
		2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/wholebody_bench.py $(BENCH_ARGS) && python tools/bench_readme.py

# Batch IK throughput (1 vs 2 worker processes) and a capability map: results/batch.*.
# BATCH_ARGS=--quick for a one-minute run.
bench-batch: build
	@$(ENV) python bench/batch_bench.py $(BATCH_ARGS)

# Closed-form pose IK on every 6R arm of example-robot-data and shared/real_urdfs: which
# have a closed form, ours vs lm today vs EAIK raw vs TRAC-IK, num_solutions vs EAIK,
# unreachable targets, batch CPU per target: results/analytic.*. ANALYTIC_ARGS=--quick.
bench-analytic: build
	@$(ENV) pip install --quiet -r bench/requirements-bench.txt 2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/analytic_bench.py $(ANALYTIC_ARGS) && python tools/bench_readme.py

# 7R arms by a swept joint over 6R closed forms against lm today and TRAC-IK, interleaved:
# results/sweep.*. SWEEP_ARGS=--quick.
bench-sweep: build
	@$(ENV) pip install --quiet -r bench/requirements-bench.txt 2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/sweep_bench.py $(SWEEP_ARGS)

# MoveIt's orientation constraint (RotationBoxConstraint) against Drake SNOPT with the same
# rows, on feasible problems: results/rotation_box.*. ROTATION_BOX_ARGS=--quick.
bench-rotation-box: build
	@$(ENV) pip install --quiet -r bench/requirements-bench.txt 2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/rotation_box_bench.py $(ROTATION_BOX_ARGS)

# 7R arms whose swept roll is compiled (closed_form/inner.py) against EAIK's form per value,
# in one process, per target in turn: results/inner.*. INNER_ARGS=--quick.
bench-inner: build
	@$(ENV) pip install --quiet -r bench/requirements-bench.txt 2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/inner_ab.py $(INNER_ARGS)

# 7-joint arms: solve() today against lm at issue 48's start commit (ef381ac), each in its own
# worktree, same targets, TRAC-IK between solves in both: results/seven_r.*.
# SEVEN_R_ARGS=--quick (200 targets, one round), --warm (no TRAC-IK between solves);
# SEVEN_R_OLD=<rev> to compare with another commit. Today's run also times the floor (worker --floor).
SEVEN_R_OLD ?= ef381ac
bench-seven-r: setup
	@$(ENV) pip install --quiet -r bench/requirements-bench.txt 2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/seven_r_ab.py --old $(SEVEN_R_OLD) $(SEVEN_R_ARGS)

# Old against new in ONE process (both packages imported under two names, solve() paired per
# target): what the VM's noisy phases hide from process alternation. PAIRED_OLD=<rev>;
# PAIRED_ARGS=--quick (ur5 and panda, 60 targets) or --arms a,b --poses N: results/paired_ab.*;
# --scale bench/results/analytic.json estimates that run (made at PAIRED_OLD elsewhere) today.
PAIRED_OLD ?= HEAD~1
bench-paired: setup
	@$(ENV) pip install --quiet -r bench/requirements-bench.txt 2>&1 | { grep -v "is ignored" || true; } \
	&& python bench/paired_ab.py --old $(PAIRED_OLD) $(PAIRED_ARGS)

# ComputeIK while joint_states jitter (a group held elsewhere per request): today against
# HELD_OLD, each in its own worktree, the node's handler in-process: results/held.*.
# HELD_ARGS=--quick (2 robots, 30 requests, one round).
HELD_OLD ?= 33d6e79
bench-held: build
	@$(ENV) python bench/held_ab.py --old $(HELD_OLD) $(HELD_ARGS)

# Hand targets inside an obstacle: solve() beside the search alone (and Drake on the Panda)
# on every catalogue arm: results/blocked.* and docs/physical_arms.md. BLOCKED_ARGS=--quick.
bench-blocked: build
	@$(ENV) pip install --quiet -r bench/requirements-collision.txt 2>&1 \
		| { grep -v "is ignored" || true; } && python bench/blocked_bench.py $(BLOCKED_ARGS)

# Import cost (issue 46): `import ros2_ik.core` after `import pinocchio` in fresh processes,
# cached bytecode and none, interleaved: results/import.*. IMPORT_ARGS=--quick (6 runs, ~1 min).
bench-import: build
	@$(ENV) python bench/import_bench.py $(IMPORT_ARGS)

# Old commit against new (issue 39): the pose, constrained and collision benchmarks of both
# revisions interleaved (each in a temporary git worktree), then the completeness fuzz on each:
# results/ab.{json,md,png}. AB_ARGS=--quick: one round at small N (~6 min), a smoke test.
OLD ?= 1a1e2a7
NEW ?= HEAD
bench-ab: setup
	@$(ENV) pip install --quiet -r bench/requirements-collision.txt 2>&1 \
		| { grep -v "is ignored" || true; } \
	&& python bench/ab.py --old $(OLD) --new $(NEW) $(AB_ARGS)

# >= 10,000 generated requests against the core and the running node (soundness), then the
# completeness fuzz: 5,000 feasible problems on ~110 robots, lm beside Drake SNOPT
# (results/completeness.*). FUZZ_ARGS=--quick for a smoke run of both.
fuzz: build
	@$(ENV) pip install --quiet -r bench/requirements-collision.txt 2>&1 \
		| { grep -v "is ignored" || true; } \
	&& python bench/fuzz.py $(FUZZ_ARGS) && python bench/completeness.py $(filter --quick,$(FUZZ_ARGS))

# The completeness fuzz alone (COMPLETENESS_ARGS=--quick: 600 problems).
completeness: build
	@$(ENV) pip install --quiet -r bench/requirements-collision.txt 2>&1 \
		| { grep -v "is ignored" || true; } \
	&& python bench/completeness.py $(COMPLETENESS_ARGS)

# Latency, load and soak on loopback, bounded in count and time (~8 min; LOAD_ARGS=--quick
# for a smoke run): bench/results/load.json, load.md and the README table.
load: build
	@$(ENV) python bench/load.py $(LOAD_ARGS)

clean:
	rm -rf build install log .venv
