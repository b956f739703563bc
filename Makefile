# Makefile - thin wrapper over CMake for the usual commands.
#
#   make            configure and build (warnings are errors)
#   make demo       build, then run every example in build/examples/, and
#                   the LAPI ones as jobs of 2 and 4 core groups (lapirun)
#   make test       build, then run every test with ctest
#   make install    install into $(PREFIX) (default /usr/local)
#   make clean      remove the build directory
#
# Variables: BUILD (build directory, default build), PREFIX, JOBS (build
# jobs, default nproc), CTEST_JOBS (tests run at once, default 2) and
# CMAKE_FLAGS (extra cmake options, e.g. -DOPENLAPI_SANITIZE=address).

BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_JOBS ?= 2
CMAKE_FLAGS ?=

# Keep the recursive make that cmake --build starts quiet about directories.
MAKEFLAGS += --no-print-directory

.PHONY: all build demo test install clean help

all: build

build:
	cmake -S . -B $(BUILD) -DOPENLAPI_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

# Run every example binary that the build produced; fail if any fails.
demo: build
	@ran=0; failed=""; \
	for prog in $(BUILD)/examples/*; do \
	  [ -f "$$prog" ] && [ -x "$$prog" ] || continue; \
	  echo "==> $$prog"; \
	  if "$$prog" </dev/null; then ran=$$((ran + 1)); \
	  else echo "demo: $$prog failed (exit $$?)" >&2; failed="$$failed $$prog"; fi; \
	done; \
	if [ -x $(BUILD)/bin/lapirun ] && [ -x $(BUILD)/examples/lapi_amsendv_vectors ]; then \
	  echo "==> lapirun -n 2 --label $(BUILD)/examples/lapi_amsendv_vectors  (2 core groups, libfabric)"; \
	  if $(BUILD)/bin/lapirun -n 2 --label $(BUILD)/examples/lapi_amsendv_vectors </dev/null; \
	  then ran=$$((ran + 1)); else failed="$$failed lapirun-n2:lapi_amsendv_vectors"; fi; \
	  echo "==> lapirun -n 4 --label $(BUILD)/examples/lapi_put_get_rmw  (4 core groups)"; \
	  if $(BUILD)/bin/lapirun -n 4 --label $(BUILD)/examples/lapi_put_get_rmw </dev/null; \
	  then ran=$$((ran + 1)); else failed="$$failed lapirun-n4:lapi_put_get_rmw"; fi; \
	fi; \
	if [ -n "$$failed" ]; then echo "demo: FAILED:$$failed" >&2; exit 1; fi; \
	if [ $$ran -eq 0 ]; then echo "demo: no example was built" >&2; exit 1; fi; \
	echo "demo: $$ran example(s) passed"

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(CTEST_JOBS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)
	@# Refresh the loader cache when installing as root into a system prefix.
	@case "$(PREFIX)" in /usr|/usr/local) \
	  if [ "$$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi;; \
	esac

clean:
	@case "$(BUILD)" in ""|.|./|/|..|../) \
	  echo "clean: refusing to remove BUILD=$(BUILD)" >&2; exit 1;; esac
	rm -rf $(BUILD)

help:
	@sed -n '3,12p' Makefile | sed 's/^# \{0,1\}//'
