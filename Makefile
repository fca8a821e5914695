# SPDX-License-Identifier: GPL-2.0-or-later
# fabricd - one Makefile for the daemon, its tests and its installation.
#   make               build fabricd/fabricd
#   make SANITIZE=1    build with ASan + UBSan (objects go to build/san/)
#   make check         every test: unit (plain and sanitized), fuzz smoke, pytest integration
#   make unit          C unit tests only (no root)
#   make fuzz FUZZ_SECONDS=600   run the libFuzzer harnesses
#   make vmcheck       kernel-WireGuard tier under QEMU (tests/vm/focused.txt)
#   make demo          a three-node simulated cluster in network namespaces
#   make install       /usr/sbin/fabricd, systemd unit, modules-load.d file, schemas,
#                      examples, man pages, bash completion (what the .deb holds)
#   make deb           the Debian package, ../fabricd_<version>_amd64.deb

PREFIX ?= /usr
DESTDIR ?=
SBINDIR ?= $(PREFIX)/sbin
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= /lib/systemd/system
MODULESLOADDIR ?= /usr/lib/modules-load.d
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/fabricd
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
CC ?= cc
PKG_CONFIG ?= pkg-config
PYTEST ?= /usr/bin/python3 -m pytest
FUZZ_SECONDS ?= 30

# libmicrohttpd: the --metrics HTTP server (Debian runtime package: libmicrohttpd12)
PKGS := jansson libmnl libsodium libnftables libmicrohttpd
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes \
	  -Wformat=2 -Wno-format-nonliteral -MMD -MP -Ifabricd -I.
CFLAGS += $(shell $(PKG_CONFIG) --cflags $(PKGS)) -pthread
# libmicrohttpd is loaded by `run --metrics` only (daemon/metrics_http.c says why)
LDLIBS += $(shell $(PKG_CONFIG) --libs $(filter-out libmicrohttpd,$(PKGS))) -pthread -lm

# The version has one source, the first line of debian/changelog; the binary
# gets it through the generated $(BUILD)/version.h.
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)

ifeq ($(SANITIZE),1)
BUILD ?= build/san
CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
else
BUILD ?= build/release
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

# One folder per layer (see fabricd/README.md). The bench is its own library,
# linked only into the binary (and the one unit test of its report).
LAYERS := base definition kinds engine netlink wireguard daemon
LIB_SRCS := $(foreach d,$(LAYERS),$(wildcard fabricd/$(d)/*.c)) $(wildcard kmod/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
BENCH_SRCS := $(wildcard fabricd/bench/*.c)
BENCH_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/%.o)
CLI_SRCS := $(wildcard fabricd/cli/*.c)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
LIB := $(BUILD)/libfabricd.a
BENCH_LIB := $(BUILD)/libfabricd-bench.a
BIN := $(BUILD)/fabricd/fabricd
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)

.PHONY: FORCE all tools check unit unit-run fuzz fuzz-smoke vmcheck demo install deb clean format deps integration
all: fabricd/fabricd

# The user-facing binary is always fabricd/fabricd (the release build, or the
# sanitized one with SANITIZE=1). Copied beside it and renamed: a daemon or a
# test running the old one ("Text file busy") keeps it, the next start gets this.
# Compared on every make, not by date: after `make SANITIZE=1` the copy is newer
# than the release build, and a plain `make` would otherwise leave the
# sanitized binary in place.
fabricd/fabricd: $(BIN) FORCE
	$(Q)cmp -s $(BIN) $@ || { cp $(BIN) $@.new && mv -f $@.new $@; }

FORCE:

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@[ -n "$(Q)" ] && echo "  CC      $<" || true
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -I$(BUILD) -c -o $@ $<

$(BUILD)/version.h: debian/changelog
	@mkdir -p $(dir $@)
	$(Q)printf '#define FABRICD_VERSION "%s"\n' '$(VERSION)' > $@

$(BUILD)/fabricd/cli/main.o $(BUILD)/fabricd/daemon/monitor.o: $(BUILD)/version.h

$(LIB): $(LIB_OBJS)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BENCH_LIB): $(BENCH_OBJS)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BIN): $(CLI_OBJS) $(BENCH_LIB) $(LIB)
	@[ -n "$(Q)" ] && echo "  LD      $@" || true
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/unit/test_%: tests/unit/test_%.c tests/unit/unit.h $(BENCH_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(BENCH_LIB) $(LIB) $(LDFLAGS) $(LDLIBS)

unit: $(UNIT_BINS)

# tests/tools: nlrecord records a node's kernel state into tests/fixtures/nl/;
# slow_wireguard_go is a wireguard-go slow to open its socket (test_adopt);
# guard_delta sends a guard delta by netlink (test_guard_delta)
$(BUILD)/tests/tools/%: tests/tools/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

tools: $(BUILD)/tests/tools/nlrecord $(BUILD)/tests/tools/slow_wireguard_go \
	$(BUILD)/tests/tools/guard_delta

# Runs every unit test binary of this build; pytest wraps the same binaries.
# Exit 77 is a skip (tests/unit/unit.h), reported by the binary itself.
unit-run: unit
	$(Q)set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t || [ $$? -eq 77 ]; done

fuzz:
	$(Q)$(MAKE) -C tests/fuzz run FUZZ_SECONDS=$(FUZZ_SECONDS)

# Everything the README's test command runs, after scripts/install-deps.sh.
check:
	$(Q)$(MAKE) all tools
	$(Q)$(MAKE) SANITIZE=1 unit
	$(Q)$(MAKE) unit
	$(Q)$(MAKE) -C tests/fuzz build
	$(Q)$(PYTEST) -c tests/pytest.ini tests

# The QEMU tier's focused selection (tests/vm/focused.txt, the same that make
# check runs through tests/test_vm.py), with the same limit: about 13 minutes
# of emulation on 2 cores, more while the machine is busy.
VM_TIMEOUT ?= 2400
vmcheck: all $(BUILD)/tests/unit/test_wg_genl_live
	$(Q)start=$$(date +%s); rc=0; \
	VM_TIMEOUT=$(VM_TIMEOUT) tests/vm/run-vm-tests.sh $$(grep -v '^#' tests/vm/focused.txt) || rc=$$?; \
	echo "make vmcheck: $$(( $$(date +%s) - start )) s (limit $(VM_TIMEOUT) s), exit $$rc"; \
	exit $$rc

demo: all
	$(Q)scripts/demo.sh

install: all
	install -D -m 0755 fabricd/fabricd $(DESTDIR)$(SBINDIR)/fabricd
	install -D -m 0644 hooks/fabricd.service $(DESTDIR)$(SYSTEMDUNITDIR)/fabricd.service
	install -D -m 0644 kmod/modules-load.d/fabricd.conf $(DESTDIR)$(MODULESLOADDIR)/fabricd.conf
	install -d $(DESTDIR)$(DATADIR)/fabricd $(DESTDIR)$(DOCDIR)/examples
	install -m 0644 schemas/*.schema.json $(DESTDIR)$(DATADIR)/fabricd/
	install -m 0644 examples/*.json $(DESTDIR)$(DOCDIR)/examples/
	install -D -m 0644 man/fabricd.8 $(DESTDIR)$(MANDIR)/man8/fabricd.8
	install -D -m 0644 man/fabricd.json.5 $(DESTDIR)$(MANDIR)/man5/fabricd.json.5
	install -D -m 0644 completion/fabricd.bash $(DESTDIR)$(BASHCOMPDIR)/fabricd
	# the definition and the private key (the package makes it in postinst instead)
	install -d -m 0700 $(DESTDIR)$(SYSCONFDIR)/fabricd

# dpkg-buildpackage writes the packages to the parent directory (as Debian's
# tools do); its .buildinfo and .changes, which must sit next to the .debs
# while it runs, are moved into build/, so only the .debs stay outside the tree.
deb:
	dpkg-buildpackage -us -uc -b $(DPKG_BUILDPACKAGE_FLAGS)
	mv ../fabricd_$(VERSION)_*.buildinfo ../fabricd_$(VERSION)_*.changes build/

format:
	clang-format -i fabricd/*/*.[ch] kmod/*.[ch] tests/unit/*.[ch] tests/fuzz/*.c

clean:
	rm -rf build fabricd/fabricd
	$(MAKE) -C tests/fuzz clean

-include $(LIB_OBJS:.o=.d) $(BENCH_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
