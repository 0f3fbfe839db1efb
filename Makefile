# AppLifecycle: the two commands for a fresh machine are `make demo` and `make test`.
# Each target installs the Debian packages it needs, only when they are missing.

SHELL := /bin/bash
SWIFT ?= swift
# Building needs libsystemd; the tests and the demo also need a bus daemon, python-dbusmock and gdbus.
BUILD_PACKAGES := libsystemd-dev pkg-config
APT_PACKAGES := $(BUILD_PACKAGES) dbus-daemon python3-dbusmock libglib2.0-bin
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build-deps build test format lint asan demo bench install clean

deps: PACKAGES = $(APT_PACKAGES)
build-deps: PACKAGES = $(BUILD_PACKAGES)
deps build-deps:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

# Both test runs go through scripts/run-logged.sh: output to a file followed with tail (apps and
# bus daemons that outlive a crashed test process must not hold a pipe CI waits on), a time
# limit (the runs take seconds and minutes), and the failures repeated last. scripts/timed.sh
# prints how long each part took, so a slow part shows in CI's log.
TEST_TIME_LIMIT ?= 1200
test: deps
	scripts/timed.sh "format check" $(MAKE) --no-print-directory lint
	scripts/timed.sh "build with tests" $(SWIFT) build --build-tests
	scripts/timed.sh "unit and integration tests" \
		scripts/run-logged.sh .build/test.log $(TEST_TIME_LIMIT) $(SWIFT) test --skip-build
	scripts/timed.sh "AddressSanitizer run" $(MAKE) --no-print-directory asan

# House style: .swift-format at the root (4 spaces, 120 columns, ordered imports). `make format`
# rewrites the tree; `make lint` (part of `make test`) fails on any difference or rule finding.
# Two default rules are off: OnlyOneTrailingClosureArgument (it forbids
# withTaskCancellationHandler { } onCancel: { } and its kind) and ReplaceForEachWithForLoop
# (`handlers.forEach { $0() }` reads better than the loop).
FORMAT_PATHS = Package.swift Sources Tests Examples Benchmarks
format:
	$(SWIFT) format format --in-place --recursive --parallel $(FORMAT_PATHS)

lint:
	$(SWIFT) format lint --strict --recursive --parallel $(FORMAT_PATHS)

# The core's tests (the center's unsafe, borrowed-snapshot post loop) in an optimised build
# under AddressSanitizer: only -O lets the compiler drop the retains that would hide a
# use-after-free. Leak checking is off because XCTest's own runner leaks.
asan: deps
	mkdir -p .build-asan
	ASAN_OPTIONS=detect_leaks=0 scripts/run-logged.sh .build-asan/test.log 3600 \
		$(SWIFT) test -c release -Xswiftc -enable-testing --sanitize=address \
		--scratch-path .build-asan --filter 'AppLifecycleTests|AppLifecycleTestingTests'

# The scripted day on real D-Bus signals: private buses, python-dbusmock's logind, timedated,
# low_memory_monitor and gnome_screensaver, and the real host bridge.
demo: deps
	$(SWIFT) build --product lifecycle-example
	.build/debug/lifecycle-example --host sandbox

bench: deps
	$(SWIFT) build -c release --product lifecycle-bench
	$(SWIFT) build -c release --product lifecycled
	.build/release/lifecycle-bench center
	.build/release/lifecycle-bench latency
	.build/release/lifecycle-bench sleep-delay
	.build/release/lifecycle-bench fanout
	.build/release/lifecycle-bench throughput
	.build/release/lifecycle-bench idle

# Installs lifecycled and lifecyclectl (release build), the systemd user unit and the D-Bus
# activation file, both rewritten to run $(PREFIX)/bin/lifecycled. DESTDIR is honoured for packaging.
PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin
USERUNITDIR = $(PREFIX)/lib/systemd/user
DBUSSERVICEDIR = $(PREFIX)/share/dbus-1/services

install: build-deps
	$(SWIFT) build -c release --product lifecycled
	$(SWIFT) build -c release --product lifecyclectl
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(USERUNITDIR)" "$(DESTDIR)$(DBUSSERVICEDIR)"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/lifecycled" "$(DESTDIR)$(BINDIR)/lifecycled"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/lifecyclectl" "$(DESTDIR)$(BINDIR)/lifecyclectl"
	sed 's|^ExecStart=.*|ExecStart=$(BINDIR)/lifecycled|' dist/systemd/user/lifecycled.service > "$(DESTDIR)$(USERUNITDIR)/lifecycled.service"
	sed 's|^Exec=.*|Exec=$(BINDIR)/lifecycled|' dist/dbus-1/services/org.applifecycle.Lifecycled1.service > "$(DESTDIR)$(DBUSSERVICEDIR)/org.applifecycle.Lifecycled1.service"
	chmod 0644 "$(DESTDIR)$(USERUNITDIR)/lifecycled.service" "$(DESTDIR)$(DBUSSERVICEDIR)/org.applifecycle.Lifecycled1.service"

clean:
	rm -rf .build
