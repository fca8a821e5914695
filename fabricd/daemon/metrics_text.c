// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/metrics_text.c - struct metrics_data in the Prometheus text format.
 * No I/O: the text goes to a memory stream, so the daemon renders it in its
 * loop and the HTTP thread only sends finished text. The stream writes
 * into a buffer kept from one render to the next (struct metrics_text).
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/metrics.h"

const double metrics_duration_buckets[METRICS_N_BUCKETS] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
};

/* A label value with \, " and newline escaped, as the text format requires. */
static void put_label(FILE *f, const char *s)
{
	fputc('"', f);
	if (!strpbrk(s, "\\\"\n")) { /* names and numbers: nothing to escape */
		fputs(s, f);
		fputc('"', f);
		return;
	}
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void peer_label(FILE *f, const char *name, const char *peer)
{
	fprintf(f, "%s{peer=", name);
	put_label(f, peer);
	fputs("} ", f);
}

static void render_peers(FILE *f, const struct metrics_data *d)
{
	/* no wgfab0 of fabricd's: no peers, as status says (their last values would pass) */
	size_t n_peers = d->fabric_present ? d->n_peers : 0;

	family(f, "fabricd_peer_latest_handshake_timestamp_seconds", "gauge",
	       "Epoch time of the latest WireGuard handshake with the peer (0: never).");
	for (size_t i = 0; i < n_peers; i++) {
		peer_label(f, "fabricd_peer_latest_handshake_timestamp_seconds", d->peers[i].name);
		fprintf(f, "%lld\n", (long long)d->peers[i].latest_handshake);
	}
	family(f, "fabricd_peer_latest_handshake_age_seconds", "gauge",
	       "Seconds since the latest WireGuard handshake (absent: never); above 180 the "
	       "session has expired.");
	for (size_t i = 0; i < n_peers; i++) {
		double age = d->scrape_timestamp - (double)d->peers[i].latest_handshake;

		if (!d->peers[i].latest_handshake)
			continue;
		peer_label(f, "fabricd_peer_latest_handshake_age_seconds", d->peers[i].name);
		fprintf(f, "%.0f\n", age < 0 ? 0 : age);
	}
	family(f, "fabricd_peer_receive_bytes_total", "counter",
	       "Bytes received from the peer through WireGuard.");
	for (size_t i = 0; i < n_peers; i++) {
		peer_label(f, "fabricd_peer_receive_bytes_total", d->peers[i].name);
		fprintf(f, "%llu\n", (unsigned long long)d->peers[i].rx_bytes);
	}
	family(f, "fabricd_peer_transmit_bytes_total", "counter",
	       "Bytes sent to the peer through WireGuard.");
	for (size_t i = 0; i < n_peers; i++) {
		peer_label(f, "fabricd_peer_transmit_bytes_total", d->peers[i].name);
		fprintf(f, "%llu\n", (unsigned long long)d->peers[i].tx_bytes);
	}
	family(f, "fabricd_peer_endpoint_changes_total", "counter",
	       "Changes of the peer's WireGuard endpoint seen since the daemon started.");
	for (size_t i = 0; i < n_peers; i++) {
		peer_label(f, "fabricd_peer_endpoint_changes_total", d->peers[i].name);
		fprintf(f, "%llu\n", (unsigned long long)d->peers[i].endpoint_changes);
	}
}

static void probe_labels(FILE *f, const char *name, const struct metrics_probe *p)
{
	fprintf(f, "%s{peer=", name);
	put_label(f, p->peer);
	fputs(",zone=", f);
	put_label(f, p->zone);
	fputs(",transport=", f);
	put_label(f, p->transport);
	fputs("} ", f);
}

static void render_probes(FILE *f, const struct metrics_data *d)
{
	static const struct {
		const char *name, *help;
	} fams[] = {
	    {"fabricd_probe_reachable",
	     "1 when a data-path probe through the zone's VXLAN path came back from the peer."},
	    {"fabricd_probe_mtu_black_hole",
	     "1 when probes of the zone MTU are lost while smaller ones pass."},
	    {"fabricd_probe_largest_passing_bytes",
	     "The largest probe (bytes of Ethernet payload, as a guest's MTU) that came back."},
	    {"fabricd_probe_mtu_bytes", "The size probed first: the zone MTU."},
	    {"fabricd_probe_rtt_seconds", "Round-trip time of the last probe that came back."},
	};

	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		family(f, fams[k].name, "gauge", fams[k].help);
		for (size_t i = 0; i < d->n_probes; i++) {
			const struct metrics_probe *p = &d->probes[i];

			if (k == 4 && !p->reachable)
				continue;
			probe_labels(f, fams[k].name, p);
			if (k == 0)
				fprintf(f, "%d\n", p->reachable);
			else if (k == 1)
				fprintf(f, "%d\n", p->black_hole);
			else if (k == 2)
				fprintf(f, "%u\n", p->largest);
			else if (k == 3)
				fprintf(f, "%u\n", p->mtu);
			else
				fprintf(f, "%.6f\n", p->rtt_seconds);
		}
	}
}

static void render_zones(FILE *f, const struct metrics_data *d)
{
	family(f, "fabricd_zone_info", "gauge", "A zone this node is a member of (always 1).");
	for (size_t i = 0; i < d->n_zones; i++) {
		fputs("fabricd_zone_info{zone=", f);
		put_label(f, d->zones[i].name);
		fputs(",transport=", f);
		put_label(f, d->zones[i].transport);
		fputs(",mtu_policy=", f);
		put_label(f, d->zones[i].mtu_policy);
		fputs("} 1\n", f);
	}
	family(f, "fabricd_zone_mtu_bytes", "gauge", "The zone's MTU: what its guests may send.");
	for (size_t i = 0; i < d->n_zones; i++) {
		fputs("fabricd_zone_mtu_bytes{zone=", f);
		put_label(f, d->zones[i].name);
		fprintf(f, "} %u\n", d->zones[i].mtu);
	}
	family(f, "fabricd_zone_vnets", "gauge", "Vnets of the zone.");
	for (size_t i = 0; i < d->n_zones; i++) {
		fputs("fabricd_zone_vnets{zone=", f);
		put_label(f, d->zones[i].name);
		fprintf(f, "} %zu\n", d->zones[i].n_vnets);
	}
}

static void render_vnets(FILE *f, const struct metrics_data *d)
{
	static const struct {
		const char *name, *help;
		size_t offset;
	} fams[] = {
#define VNET_FAM(n, field, help)                                                                   \
	{"fabricd_vnet_" n "_total", help, offsetof(struct metrics_vnet, field)}
	    /* a series per VXLAN device (label device): both during a switch's hold */
	    VNET_FAM("receive_packets", rx_packets, "Packets the vnet's VXLAN device received."),
	    VNET_FAM("transmit_packets", tx_packets, "Packets the vnet's VXLAN device sent."),
	    VNET_FAM("receive_bytes", rx_bytes, "Bytes the vnet's VXLAN device received."),
	    VNET_FAM("transmit_bytes", tx_bytes, "Bytes the vnet's VXLAN device sent."),
	    VNET_FAM("receive_errors", rx_errors, "Receive errors of the vnet's VXLAN device."),
	    VNET_FAM("transmit_errors", tx_errors, "Transmit errors of the vnet's VXLAN device."),
	    VNET_FAM("receive_dropped", rx_dropped, "Received packets the VXLAN device dropped."),
	    VNET_FAM("transmit_dropped", tx_dropped, "Packets the VXLAN device dropped on send."),
#undef VNET_FAM
	};

	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		family(f, fams[k].name, "counter", fams[k].help);
		for (size_t i = 0; i < d->n_vnets; i++) {
			const struct metrics_vnet *v = &d->vnets[i];
			uint64_t value;

			if (!v->present)
				continue;
			memcpy(&value, (const char *)v + fams[k].offset, sizeof(value));
			fprintf(f, "%s{vnet=", fams[k].name);
			put_label(f, v->name);
			fputs(",zone=", f);
			put_label(f, v->zone);
			fprintf(f, ",vni=\"%u\",device=", v->vni);
			put_label(f, v->device);
			fprintf(f, "} %llu\n", (unsigned long long)value);
		}
	}
}

static void render_frr(FILE *f, const struct metrics_data *d)
{
	if (!d->evpn || !d->frr_checked)
		return;
	family(f, "fabricd_frr_running", "gauge",
	       "1 while FRR's zebra and bgpd run (EVPN nodes only): without them the node's "
	       "EVPN vnets neither advertise nor learn.");
	fprintf(f, "fabricd_frr_running %d\n", d->frr_running);
}

static void render_guard(FILE *f, const struct metrics_data *d)
{
	family(f, "fabricd_guard_present", "gauge",
	       "1 when this cluster's nftables guard (table inet fabricd) is in the kernel.");
	fprintf(f, "fabricd_guard_present %d\n", d->guard_present);
	family(f, "fabricd_guard_dropped_packets_total", "counter",
	       "Packets the nftables guard dropped, per counter.");
	for (int i = 0; i < FW_N_COUNTERS; i++) {
		if (d->guard_counter_present[i])
			fprintf(f, "fabricd_guard_dropped_packets_total{counter=\"%s\"} %llu\n",
				firewall_counter_names[i] + strlen("drop_"),
				(unsigned long long)d->guard[i].packets);
	}
	family(f, "fabricd_guard_dropped_bytes_total", "counter",
	       "Bytes the nftables guard dropped, per counter.");
	for (int i = 0; i < FW_N_COUNTERS; i++) {
		if (d->guard_counter_present[i])
			fprintf(f, "fabricd_guard_dropped_bytes_total{counter=\"%s\"} %llu\n",
				firewall_counter_names[i] + strlen("drop_"),
				(unsigned long long)d->guard[i].bytes);
	}
}

static void render_process(FILE *f, const struct metrics_data *d)
{
	family(f, "fabricd_heap_in_use_bytes", "gauge",
	       "Bytes the daemon holds from malloc between passes.");
	fprintf(f, "fabricd_heap_in_use_bytes %llu\n", (unsigned long long)d->heap_in_use_bytes);
}

static void render_reconcile(FILE *f, const struct metrics_data *d)
{
	family(f, "fabricd_definition_in_force", "gauge",
	       "1 when the definition file as it is now is the one in force; 0 when it was "
	       "refused (not valid) or waits to be applied, and the last good one stays.");
	fprintf(f, "fabricd_definition_in_force %d\n", d->definition_in_force);
	family(f, "fabricd_vnets_held", "gauge",
	       "Vnets left as they are because another owner holds one of their names or "
	       "their VNI (the log and fabricd status name it); the rest is repaired.");
	fprintf(f, "fabricd_vnets_held %zu\n", d->vnets_held);
	family(f, "fabricd_reconcile_passes_total", "counter",
	       "Reconcile passes (observe, diff, plan, apply) since the daemon started.");
	fprintf(f, "fabricd_reconcile_passes_total %llu\n", (unsigned long long)d->passes);
	family(f, "fabricd_reconcile_errors_total", "counter",
	       "Passes that failed (the daemon retries with back-off).");
	fprintf(f, "fabricd_reconcile_errors_total %llu\n", (unsigned long long)d->pass_errors);
	family(f, "fabricd_reconcile_duration_seconds", "histogram", "Duration of a pass.");
	for (int i = 0; i < METRICS_N_BUCKETS; i++)
		fprintf(f, "fabricd_reconcile_duration_seconds_bucket{le=\"%g\"} %llu\n",
			metrics_duration_buckets[i], (unsigned long long)d->duration_buckets[i]);
	fprintf(f, "fabricd_reconcile_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
		(unsigned long long)d->passes);
	fprintf(f, "fabricd_reconcile_duration_seconds_sum %.6f\n", d->duration_sum);
	fprintf(f, "fabricd_reconcile_duration_seconds_count %llu\n",
		(unsigned long long)d->passes);
	family(f, "fabricd_drift_repairs_total", "counter",
	       "Objects changed out of band and put back, by kind of object.");
	for (size_t i = 0; i < d->n_repairs; i++) {
		fputs("fabricd_drift_repairs_total{kind=", f);
		put_label(f, d->repairs[i].kind);
		fprintf(f, "} %llu\n", (unsigned long long)d->repairs[i].count);
	}
}

/* The stream's writes, appended to a struct metrics_text (grown by half when full). */
static ssize_t text_write(void *cookie, const char *buf, size_t size)
{
	struct metrics_text *t = cookie;

	if (t->len + size + 1 > t->cap) {
		size_t cap = t->cap < 65536 ? 65536 : t->cap;
		char *grown;

		while (t->len + size + 1 > cap)
			cap += cap / 2;
		grown = realloc(t->text, cap);
		if (!grown)
			return -1;
		t->text = grown;
		t->cap = cap;
	}
	memcpy(t->text + t->len, buf, size);
	t->len += size;
	t->text[t->len] = '\0';
	return (ssize_t)size;
}

void metrics_text_free(struct metrics_text *t)
{
	free(t->text);
	*t = (struct metrics_text){0};
}

int metrics_render(const struct metrics_data *d, struct metrics_text *out)
{
	FILE *f = fopencookie(out, "w", (cookie_io_functions_t){.write = text_write});

	if (!f)
		return -ENOMEM;
	out->len = 0;
	family(f, "fabricd_build_info", "gauge", "The running fabricd (always 1).");
	fputs("fabricd_build_info{version=", f);
	put_label(f, d->version ? d->version : "unknown");
	fputs(",cluster=", f);
	put_label(f, d->cluster);
	fputs(",node=", f);
	put_label(f, d->node);
	fputs("} 1\n", f);
	family(f, "fabricd_fabric_up", "gauge",
	       "1 when the WireGuard fabric device exists and answers (wireguard-go: its socket).");
	fprintf(f, "fabricd_fabric_up %d\n", d->fabric_present);
	family(f, "fabricd_fabric_mtu_bytes", "gauge", "MTU of the WireGuard fabric device.");
	fprintf(f, "fabricd_fabric_mtu_bytes %u\n", d->fabric_mtu);
	render_peers(f, d);
	render_probes(f, d);
	render_zones(f, d);
	render_vnets(f, d);
	render_guard(f, d);
	render_frr(f, d);
	render_reconcile(f, d);
	render_process(f, d);
	bool failed = ferror(f);

	if (fclose(f) != 0 || failed || !out->text) {
		out->len = 0;
		return -ENOMEM;
	}
	return 0;
}
