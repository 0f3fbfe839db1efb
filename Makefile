# AppLifecycle: the two commands for a fresh machine are `make demo` and `make test`.
# Each target installs the Debian packages it needs, only when they are missing.

SHELL := /bin/bash
SWIFT ?= swift
# Building needs libsystemd, libmosquitto, libwayland-client's and libxcb's headers; the tests and
# the demos also need a bus daemon, python-dbusmock, gdbus, dbus-python with GLib (the UnifiedPush
# stand-ins), a real mosquitto broker and its clients, python3-venv for the Web Push interop venv
# (pywebpush from PyPI), dunst under Xvfb as a real notification server, sway (headless) with foot
# windows for the Wayland window source, and for the X11 window source openbox,
# matchbox-window-manager and twm (not EWMH) under Xvfb, driven by xdotool and read by xprop, with
# xterm and xlogo; and KWin (kwin_wayland --virtual) with GTK 3 windows from python3-gi for KDE
# Plasma's window source, installed without recommends (KWin's pull in much of a Plasma desktop).
BUILD_PACKAGES := libsystemd-dev libmosquitto-dev libwayland-dev libxcb1-dev pkg-config
APT_PACKAGES := $(BUILD_PACKAGES) dbus-daemon python3-dbusmock libglib2.0-bin python3-dbus python3-gi \
	mosquitto mosquitto-clients python3-venv dunst xvfb sway foot \
	openbox matchbox-window-manager twm xdotool xterm x11-apps x11-utils grim
KWIN_PACKAGES := kwin-wayland gir1.2-gtk-3.0
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build-deps build test format lint asan tsan demo demo-fetch demo-push demo-desktop bench install clean dist-binaries deb man-draft docs graph test-realhost realhost-run faults

# Installs the Debian packages named in $(1) that are missing (apt-get only then), with apt-get's
# options $(2) if given.
define install-missing
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(2) $$missing; \
	fi
endef

deps:
	$(call install-missing,$(APT_PACKAGES))
	$(call install-missing,$(KWIN_PACKAGES),--no-install-recommends)
build-deps:
	$(call install-missing,$(BUILD_PACKAGES))

build: deps
	$(SWIFT) build

# Both test runs go through scripts/run-logged.sh: output to a file followed with tail (apps and
# bus daemons that outlive a crashed test process must not hold a pipe CI waits on), a time
# limit (the runs take seconds and minutes), and the failures repeated last. scripts/timed.sh
# prints how long each part took, so a slow part shows in CI's log.
TEST_TIME_LIMIT ?= 1200
test: deps
	scripts/timed.sh "format check" $(MAKE) --no-print-directory lint
	scripts/timed.sh "build with tests (explicit target-dependency import check)" \
		$(SWIFT) build --build-tests --explicit-target-dependency-import-check error
	scripts/timed.sh "API documentation (DocC, no warnings)" $(MAKE) --no-print-directory docs
	scripts/timed.sh "Web Push interop venv (pywebpush, http-ece, py-vapid)" scripts/webpush-venv.sh
	scripts/timed.sh "unit and integration tests" \
		scripts/run-logged.sh .build/test.log $(TEST_TIME_LIMIT) $(SWIFT) test --skip-build
	scripts/timed.sh "AddressSanitizer run" $(MAKE) --no-print-directory asan
	scripts/timed.sh "ThreadSanitizer run" $(MAKE) --no-print-directory tsan
	scripts/timed.sh "fuzz smoke (libFuzzer, every decoder)" $(MAKE) --no-print-directory fuzz-smoke
	scripts/timed.sh "Debian packages under lintian" $(MAKE) --no-print-directory lint-deb
	scripts/timed.sh "real-host tier" $(MAKE) --no-print-directory test-realhost

# House style: .swift-format at the root (4 spaces, 120 columns, ordered imports). `make format`
# rewrites the tree; `make lint` (part of `make test`) fails on any difference or rule finding.
# Two default rules are off: OnlyOneTrailingClosureArgument (it forbids
# withTaskCancellationHandler { } onCancel: { } and its kind) and ReplaceForEachWithForLoop
# (`handlers.forEach { $0() }` reads better than the loop).
FORMAT_PATHS = Package.swift Sources Tests Examples Benchmarks Fuzz
format:
	$(SWIFT) format format --in-place --recursive --parallel $(FORMAT_PATHS)

lint:
	$(SWIFT) format lint --strict --recursive --parallel $(FORMAT_PATHS)

# The core's tests (the center's unsafe, borrowed-snapshot post loop) and the window sources'
# (C tables and proxies libwayland-client and libxcb keep pointers into) in an optimised build
# under AddressSanitizer: only -O lets the compiler drop the retains and copies that would hide a
# use-after-free or a dangling pointer. Leak checking is off because XCTest's own runner leaks.
asan: deps
	mkdir -p .build-asan
	ASAN_OPTIONS=detect_leaks=0 scripts/run-logged.sh .build-asan/test.log 3600 \
		$(SWIFT) test -c release -Xswiftc -enable-testing --sanitize=address \
		--scratch-path .build-asan \
		--filter 'AppLifecycleTests|AppLifecycleTestingTests|ForeignToplevelWindowSourceTests|EWMHWindowSourceTests|PlasmaWindowSourceTests|PlasmaWindowSourceScriptedTests'

# The tests of what crosses threads (the event loops and their hand-offs, the MQTT client on its
# loop, lifecycled with its apps, the bridge and the broker) under ThreadSanitizer, in a scratch
# path of its own. The binaries the tests start (lifecycled, the example apps) are built with it
# too and write their reports to the same log: a report from any process fails the run.
# scripts/tsan.supp holds the one known false positive (Mutex's kernel hand-over). TSAN_FILTER
# narrows the run.
TSAN_FILTER ?= SystemdBusTests|BrokerLinkTests|LifecycledTests|DeviceConditionsMonitorTests
tsan: deps
	mkdir -p .build-tsan
	TSAN_OPTIONS="suppressions=$(CURDIR)/scripts/tsan.supp second_deadlock_stack=1" \
		scripts/run-logged.sh .build-tsan/test.log 3600 \
		$(SWIFT) test --sanitize=thread --scratch-path .build-tsan --filter '$(TSAN_FILTER)'
	@! grep -a "WARNING: ThreadSanitizer" .build-tsan/test.log || \
		{ echo "ThreadSanitizer reported the races above (.build-tsan/test.log)"; exit 1; }

# libFuzzer on every decoder of outside input (Fuzz/README.md): one binary, LifecycleFuzz, built
# with -sanitize=fuzzer,address in a scratch path of its own; FUZZ_TARGET picks the decoder.
# `fuzz-smoke` (part of `make test`) runs each target for FUZZ_SMOKE_SECONDS from the committed
# seeds; `fuzz` runs each for FUZZ_SECONDS, keeping what it finds in .build-fuzz/corpus. Both fail
# on a crash, a hang or a broken round trip; the input is kept in .build-fuzz/artifacts.
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?=
FUZZ_SWIFT_FLAGS := --scratch-path .build-fuzz -Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address
.PHONY: fuzz-build fuzz-smoke fuzz
fuzz-build: build-deps
	$(SWIFT) build --product LifecycleFuzz $(FUZZ_SWIFT_FLAGS) 2>&1 | grep -v "Cannot export local symbol"; \
		exit $${PIPESTATUS[0]}

fuzz-smoke: fuzz-build
	scripts/fuzz.sh "$$($(SWIFT) build $(FUZZ_SWIFT_FLAGS) --show-bin-path)/LifecycleFuzz" \
		$(FUZZ_SMOKE_SECONDS) smoke $(FUZZ_TARGETS)

fuzz: fuzz-build
	scripts/fuzz.sh "$$($(SWIFT) build $(FUZZ_SWIFT_FLAGS) --show-bin-path)/LifecycleFuzz" \
		$(FUZZ_SECONDS) long $(FUZZ_TARGETS)

# Fault-injection campaigns (scripts/faults/README.md), not part of `make test`: the real lifecycled,
# gateway and mosquitto on private buses and loopback, run from copies of the debug binaries, under
# SIGKILLs, a dying or dropping bus, callers of another uid (setpriv), fuzzed D-Bus calls and a full
# tmpfs (mount: root). Minutes. FAULTS picks campaigns (default all), FAULTS_ARGS adds options
# (--scale 0.2, --json, --seed N, --keep); one summary line per campaign, exit 1 on a finding.
FAULTS ?=
FAULTS_ARGS ?=
faults: deps
	$(SWIFT) build --product lifecycled
	$(SWIFT) build --product lifecycle-push-gateway
	$(SWIFT) build --product lifecyclectl
	/usr/bin/python3 scripts/faults/faults.py --build "$$($(SWIFT) build --show-bin-path)" $(FAULTS_ARGS) $(FAULTS)

# The scripted day on real D-Bus signals: private buses, python-dbusmock's logind, timedated,
# low_memory_monitor and gnome_screensaver, and the real host bridge; then the day's background
# fetch and rotation through the real lifecycled (demo-fetch).
demo: deps
	$(SWIFT) build --product lifecycle-example
	.build/debug/lifecycle-example --host sandbox
	$(MAKE) --no-print-directory demo-fetch

# Background fetch that follows the device, and a rotation: python-dbusmock's NetworkManager,
# power-profiles-daemon and iio-sensor-proxy on a private system bus, lifecycled with its
# device-conditions source and counter-app (fetch every 15 minutes) on a private session bus; the
# fetch runs on Wi-Fi, waits on a metered network and in Low Power Mode, then the device turns.
demo-fetch: deps
	$(SWIFT) build --product lifecycled
	$(SWIFT) build --product lifecyclectl
	$(SWIFT) build --product counter-app
	/usr/bin/python3 scripts/demo-fetch.py --build "$$($(SWIFT) build --show-bin-path)"

# Remote notifications end to end: mosquitto, lifecycle-push-gateway and lifecycled with
# counter-app on a private bus; `lifecyclectl push` sends to the app while it is suspended and again
# while it is not running, and the timeline shows both paths.
demo-push: deps
	$(SWIFT) build
	/usr/bin/python3 scripts/demo-push.py --build "$$($(SWIFT) build --show-bin-path)"

# The compositor decides the foreground: a real sway headless, two hosted apps with a window each,
# lifecycled in single-foreground mode, the user switching between them; the timeline and a
# screenshot (grim) go to .build/demo-desktop/.
demo-desktop: deps
	$(SWIFT) build --product lifecycled
	$(SWIFT) build --product lifecyclectl
	$(SWIFT) build --product counter-app
	/usr/bin/python3 scripts/demo-desktop.py --build "$$($(SWIFT) build --show-bin-path)" --output .build/demo-desktop

bench: deps dist-binaries
	$(SWIFT) build -c release --product lifecycle-bench
	$(SWIFT) build -c release --product lifecycled
	$(SWIFT) build -c release --product lifecycle-push-gateway
	$(SWIFT) build -c release --product counter-app
	$(SWIFT) build $(DIST_SWIFT_FLAGS) --product bare-swift-process
	.build/release/lifecycle-bench center
	.build/release/lifecycle-bench latency
	.build/release/lifecycle-bench sleep-delay
	.build/release/lifecycle-bench fanout
	.build/release/lifecycle-bench throughput
	.build/release/lifecycle-bench notifications
	.build/release/lifecycle-bench push
	.build/release/lifecycle-bench fleet
	.build/release/lifecycle-bench foreground
	.build/release/lifecycle-bench fetch
	.build/release/lifecycle-bench idle --lifecycled $(DIST_BUILD)/release/lifecycled \
		--bare $(DIST_BUILD)/release/bare-swift-process

# The version every artefact carries: CommandLineSupport's PackageVersion, which --version prints.
VERSION := $(shell sed -n 's/.*static let current = "\(.*\)"/\1/p' Sources/CommandLineSupport/PackageVersion.swift)

# Release binaries for installing and packaging: they carry the Swift runtime
# (--static-swift-stdlib), so they run on a machine without a Swift toolchain, and they idle in
# less memory. A scratch path of their own, since the flag changes every object file.
DIST_BUILD := .build-dist
# Not PIE: a static position-independent binary relocates its 2.4 MB of data at every start,
# which dirtied 1.9 MiB of lifecycled's idle RSS (16.2 → 14.3 MiB measured). The price is that the
# executable's own image is not address-randomised (its libraries, heap and stacks still are).
# Laid out for an idle daemon: every function in a section of its own, and lld puts the ones
# dist/lifecycled.order lists (what lifecycled runs from start to idle, `make dist-order`) first,
# so the pages an idle lifecycled has touched are few and together (RSS 15.8 → 13.4 MiB measured:
# the kernel maps 64 KiB around each page touched). A stale list costs memory, not correctness.
# SwiftPM does not recompile when only these flags change: remove $(DIST_BUILD) after editing them.
# The source paths the compilers write into the binaries (C's __FILE__ in the crypto library's
# error reporting, Swift's #file and #filePath in preconditions, the debug information) are mapped
# from this checkout to `.`, so no installed file names the build machine's directories
# (package-deb.sh checks).
DIST_ORDER := $(CURDIR)/dist/lifecycled.order
DIST_PREFIX_MAP := -Xcc -ffile-prefix-map=$(CURDIR)=. -Xswiftc -file-prefix-map -Xswiftc $(CURDIR)=.
DIST_SWIFT_FLAGS := -c release --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xswiftc -use-ld=lld \
	-Xlinker --symbol-ordering-file=$(DIST_ORDER) -Xlinker --no-warn-symbol-ordering $(DIST_PREFIX_MAP) \
	--scratch-path $(DIST_BUILD)
# What the packages hold: the two programs, the push gateway and the example app.
DIST_PRODUCTS := lifecycled lifecyclectl lifecycle-push-gateway counter-app
dist-binaries: build-deps
	for product in $(DIST_PRODUCTS); do $(SWIFT) build $(DIST_SWIFT_FLAGS) --product $$product || exit 1; done

# Regenerates dist/lifecycled.order from the dist build: lifecycled under callgrind (valgrind) on a
# private bus until it is idle (scripts/lifecycled-order.py); then `make dist-binaries` again.
.PHONY: dist-order
dist-order: dist-binaries
	$(call install-missing,valgrind)
	scripts/lifecycled-order.py --lifecycled $(DIST_BUILD)/release/lifecycled --output dist/lifecycled.order

# Installs lifecycled, lifecyclectl and lifecycle-push-gateway, the systemd user unit and the D-Bus
# activation file (both rewritten to run $(PREFIX)/bin/lifecycled), the gateway's system unit and
# /etc/applifecycle/push-gateway.conf (kept when it exists), the man pages, bash, zsh and fish
# completions, the fleet's examples in $(PREFIX)/share/doc/applifecycle/examples (lifecycled.conf,
# mosquitto's configuration, ACL and password recipe), and the example app counter-app with its
# manifest (scripts/install-examples.sh). DESTDIR is honoured for packaging.
PREFIX ?= /usr/local
install: dist-binaries
	scripts/install-tree.sh "$(DESTDIR)" "$(PREFIX)" "$(DIST_BUILD)/release"
	scripts/install-examples.sh "$(DESTDIR)" "$(PREFIX)" "$(DIST_BUILD)/release"

# In dist/out: applifecycle_$(VERSION)_<arch>.deb, what `make install PREFIX=/usr` lays out but the
# example app, and applifecycle-examples_$(VERSION)_<arch>.deb, the example app; each with the
# copyright file, a changelog and Depends: computed by dpkg-shlibdeps (scripts/package-deb.sh).
DEB_PACKAGES := dpkg-dev binutils
DEBS = dist/out/applifecycle_$(VERSION)_$$(dpkg --print-architecture).deb \
	dist/out/applifecycle-examples_$(VERSION)_$$(dpkg --print-architecture).deb
deb: dist-binaries
	$(call install-missing,$(DEB_PACKAGES))
	scripts/package-deb.sh "$(VERSION)" "$(DIST_BUILD)/release" dist/out

# lintian on both packages: no error, and no tag but those dist/debian/lintian-kept explains
# (scripts/lintian-check.sh). Part of `make test`.
.PHONY: lint-deb
lint-deb: deb
	$(call install-missing,lintian)
	scripts/lintian-check.sh dist/debian/lintian-kept $(DEBS)

# The real-host tier: a Debian 12 tree made with debootstrap (cached in $(REALHOST_ROOT), rebuilt
# only when its recipe changes), booted with systemd-nspawn, driven with nsenter. The example app
# under a real logind session, then the .deb installed with apt on a system without Swift, then
# the .deb under sway (the compositor decides which app is frozen), then the fleet as the README
# installs it (mosquitto with the shipped configuration, the gateway's unit, a push by pywebpush
# reaching counter-app). Needs
# root (CI is). See scripts/realhost/realhost.py for the scenarios.
REALHOST_ROOT ?= /var/cache/applifecycle/realhost-bookworm
REALHOST_PACKAGES := debootstrap systemd-container
# The toolchain the debug build's RUNPATH names, bind-mounted at the same path for the example app.
SWIFT_TOOLCHAIN = $(shell readlink -f "$$(command -v $(SWIFT))" | sed 's|/usr/bin/[^/]*$$||')
test-realhost:
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "real-host tier SKIPPED: systemd-nspawn needs root (CI runs make test as root)"; exit 0; fi; \
	$(MAKE) --no-print-directory realhost-run

# The fleet scenario's app server is pywebpush from the Web Push interop venv, on this host (the
# container shares its network). REALHOST_ONLY runs one scenario (example, package, compositor, fleet).
REALHOST_ONLY ?=
realhost-run: deb
	$(call install-missing,$(REALHOST_PACKAGES))
	$(SWIFT) build --product lifecycle-example
	scripts/timed.sh "real-host root file system" env REALHOST_ROOT=$(REALHOST_ROOT) scripts/realhost/make-rootfs.sh
	scripts/timed.sh "Web Push interop venv" scripts/webpush-venv.sh
	scripts/timed.sh "real-host scenarios" /usr/bin/python3 scripts/realhost/realhost.py --root $(REALHOST_ROOT) \
		--build "$$($(SWIFT) build --show-bin-path)" --deb dist/out/applifecycle_$(VERSION)_$$(dpkg --print-architecture).deb \
		--examples-deb dist/out/applifecycle-examples_$(VERSION)_$$(dpkg --print-architecture).deb \
		--webpush-python "$${WEBPUSH_VENV:-$(CURDIR)/.build/webpush-venv}/bin/python" \
		--counter-app $(DIST_BUILD)/release/counter-app --toolchain "$(SWIFT_TOOLCHAIN)" \
		$(if $(REALHOST_ONLY),--only $(REALHOST_ONLY))

# The state-machine picture in the README: docs/state-machine.dot is what `lifecyclectl graph`
# prints (a test checks it), docs/state-machine.svg is Graphviz's drawing of it.
graph:
	$(call install-missing,graphviz)
	$(SWIFT) build --product lifecyclectl
	"$$($(SWIFT) build --show-bin-path)/lifecyclectl" graph > docs/state-machine.dot
	dot -Tsvg docs/state-machine.dot -o docs/state-machine.svg

# API documentation: a DocC catalog per library (Sources/<Module>/<Module>.docc), built with the
# toolchain's docc from the compiler's symbol graphs into .build/docs; any DocC warning fails it.
docs: build-deps
	scripts/docs.sh

# A first draft of the man pages from the ArgumentParser definitions, in
# .build/plugins/GenerateManual/outputs; dist/man holds the reviewed pages `make install` ships.
man-draft:
	$(SWIFT) package generate-manual --section 1
	@echo "compare with dist/man/lifecyclectl.1 and dist/man/lifecycled.8 (section 8: --section 8)"

clean:
	rm -rf .build
