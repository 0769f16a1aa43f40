# ros2_ik developer commands. Every target installs what it needs (make setup) first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
ENV := source tools/env.sh &&
PYTEST_ARGS ?=

.PHONY: setup build test demo bench bench-quick clean

setup:
	@bash tools/setup.sh

build: setup
	@bash tools/build.sh

test: build
	@$(ENV) python -m pytest ros2_ik/test -q -p no:cacheprovider $(PYTEST_ARGS)

demo: build
	@$(ENV) ik_demo_path=$$(ros2_ik_prefix=$$(python -c 'from ament_index_python.packages import get_package_prefix as g; print(g("ros2_ik"))'); echo $$ros2_ik_prefix/lib/ros2_ik/ik_demo); $$ik_demo_path

clean:
	rm -rf build install log .venv
