/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/metrics.h - what `fabricd run --metrics` exports, as plain data, and
 * its rendering in the Prometheus text format (version 0.0.4). The renderer
 * (metrics_text.c) does no I/O, so it is unit-tested on its own; the daemon
 * fills the data (monitor.c) and serves the text (metrics_http.c, or a file).
 *
 * Names follow Prometheus conventions: the fabricd_ prefix, base units
 * (seconds, bytes) in the name, _total on counters, one label per dimension.
 */
#ifndef FABRICD_DAEMON_METRICS_H
#define FABRICD_DAEMON_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "definition/model.h"
#include "kinds/guard.h"

/* Upper bounds of the pass duration histogram, seconds (+Inf is implied). */
#define METRICS_N_BUCKETS 12
extern const double metrics_duration_buckets[METRICS_N_BUCKETS];

struct metrics_peer {
	char name[FABRICD_NAME_MAX + 1];
	bool present;		  /* the WireGuard device has this peer */
	int64_t latest_handshake; /* epoch seconds, 0 = never */
	uint64_t rx_bytes, tx_bytes;
	uint64_t endpoint_changes; /* seen by the daemon since it started */
};

/* One data-path probe result: a peer through one zone (and so one transport). */
struct metrics_probe {
	char peer[FABRICD_NAME_MAX + 1];
	char zone[FABRICD_NAME_MAX + 1];
	const char *transport; /* "plain" or "secure" */
	bool reachable;	       /* a probe of some size came back */
	bool black_hole;       /* the zone MTU fails, a smaller size passes */
	double rtt_seconds;    /* of the last reply; valid when reachable */
	unsigned int mtu;      /* the zone MTU probed */
	unsigned int largest;  /* the largest size that came back, 0 = none */
};

struct metrics_zone {
	char name[FABRICD_NAME_MAX + 1];
	const char *transport;
	const char *mtu_policy;
	unsigned int mtu;
	size_t n_vnets;
};

/* A vnet's VXLAN device counters, from the kernel's link statistics. */
struct metrics_vnet {
	char name[FABRICD_NAME_MAX + 1];
	char device[16];
	char zone[FABRICD_NAME_MAX + 1];
	uint32_t vni;
	int ifindex; /* of fabricd's device when the node converged; 0: it had none */
	bool present;
	uint64_t rx_packets, tx_packets, rx_bytes, tx_bytes;
	uint64_t rx_errors, tx_errors, rx_dropped, tx_dropped;
};

/* Drift repairs, by the kind of object repaired ("vxlan", "fdb", "wireguard peer", ...). */
struct metrics_repair {
	char kind[32];
	uint64_t count;
};

struct metrics_data {
	const char *version;
	char cluster[FABRICD_NAME_MAX + 1];
	char node[FABRICD_NAME_MAX + 1];
	bool fabric_present;
	unsigned int fabric_mtu;
	size_t n_peers;
	struct metrics_peer *peers;
	size_t n_probes;
	struct metrics_probe *probes;
	size_t n_zones;
	struct metrics_zone *zones;
	size_t n_vnets;
	struct metrics_vnet *vnets;
	bool evpn;	  /* an EVPN vnet here: FRR's liveness is exported */
	bool frr_checked; /* frr_running was read at least once */
	bool frr_running; /* zebra and bgpd have live PIDs */
	bool guard_present;
	bool guard_counter_present[FW_N_COUNTERS];
	struct firewall_counter guard[FW_N_COUNTERS];
	uint64_t passes, pass_errors;
	bool definition_in_force; /* the file as it is now: not rejected, not waiting */
	size_t vnets_held;	  /* left as they are for a conflict (engine/reconcile.h) */
	uint64_t duration_buckets[METRICS_N_BUCKETS]; /* cumulative counts, as exported */
	double duration_sum;
	size_t n_repairs;
	struct metrics_repair *repairs;
	double scrape_timestamp; /* epoch seconds at which the data was read */
	/* malloc's bytes in use between passes (mallinfo2: arena and mmapped chunks);
	 * exact where RSS moves in pages, so a slow leak shows in a few reloads */
	uint64_t heap_in_use_bytes;
};

/*
 * Rendered text, kept from tick to tick: at 64 nodes and 1024 vnets it is
 * 2.7 MB, and a new growing buffer each second (and a copy of it for the
 * HTTP thread) left the daemon's heap megabytes resident above what it
 * holds (tests/unit/test_metrics.c, the tick's memory).
 */
struct metrics_text {
	char *text; /* NUL-terminated; NULL before the first render */
	size_t len; /* without the NUL */
	size_t cap;
};

/*
 * Renders d as Prometheus text into out, reusing its buffer (grown when
 * too small). 0 or -ENOMEM (out's text is then not valid).
 */
int metrics_render(const struct metrics_data *d, struct metrics_text *out);
void metrics_text_free(struct metrics_text *t);

#endif
