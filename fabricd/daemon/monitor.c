// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/monitor.c - the daemon's metrics: collected in its loop, rendered
 * there (metrics_text.c), served by a thread (metrics_http.c) or written to a
 * file for node_exporter's textfile collector.
 *
 * What a converged pass knew (zones, vnets, peers) is copied here; the
 * counters that move between passes (WireGuard bytes and handshakes, the
 * VXLAN devices' link statistics, the guard's drop counters, the probes) are
 * read again when a text is rendered: for a scrape that finds the last text
 * over a second old (metrics_http.c asks through its eventfd, which the loop
 * polls), and when the file is written. Nobody scraping costs nothing: at 64
 * nodes x 1024 vnets a render is 2.35 MB and 28,968 series, and rendering
 * one every second took 0.85 % of a core. The one counter made of
 * differences between readings, the peers' endpoint changes, is sampled from
 * the WireGuard read the daemon's periodic check makes anyway
 * (monitor_wg_seen), so a roam and back between two scrapes still counts.
 * The file is written every --metrics-file-interval (10 s by default:
 * node_exporter reads it only when scraped), the first at once after a start
 * or a reload. Nothing is read when neither --metrics nor --metrics-file is
 * given.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "daemon/monitor.h"
#include "daemon/probe.h"
#include "daemon/report.h"
#include "netlink/link_stats.h"
#include "engine/frr.h"
#include "engine/guard_io.h"
#include "version.h"

/* the endpoints are read here when the periodic check has not for this long */
#define ENDPOINTS_MS 1000

struct peer_state {
	uint8_t key[WG_KEY_LEN];
	struct sockaddr_storage endpoint; /* last seen; ss_family 0 = none yet */
};

struct monitor {
	const char *metrics_file;
	struct metrics_http *http;
	bool metrics;	/* --metrics or --metrics-file */
	bool converged; /* monitor_converged() came at least once */
	enum wg_backend backend;
	struct metrics_data d;
	struct metrics_text text; /* the last rendered, or the buffer published before it */
	struct peer_state *peers; /* parallel to d.peers */
	struct timespec pass_start;
	bool published;		       /* the HTTP server has had a text */
	long long endpoints_at;	       /* the last reading of the peers' endpoints, ms */
	long long file_at;	       /* the next write of --metrics-file; 0: at the next tick */
	unsigned int file_interval_ms; /* --metrics-file-interval */
	unsigned int file_failed;      /* refreshes whose --metrics-file could not be written */
	struct probe *probe;
	/* the node speaks EVPN: FRR's zebra and bgpd watched, their death logged */
	const char *frr_pathspace;
	long long frr_check_at;
};

#define FRR_CHECK_MS 2000

/* The repair count of kind (the first word of an op's object), added at 0 when new. */
static struct metrics_repair *repair_of(struct metrics_data *d, const char *object)
{
	size_t len = strcspn(object, " ");
	struct metrics_repair *grown;

	for (size_t i = 0; i < d->n_repairs; i++) {
		if (strlen(d->repairs[i].kind) == len && !strncmp(d->repairs[i].kind, object, len))
			return &d->repairs[i];
	}
	grown = realloc(d->repairs, (d->n_repairs + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	d->repairs = grown;
	snprintf(grown[d->n_repairs].kind, sizeof(grown[0].kind), "%.*s", (int)len, object);
	grown[d->n_repairs].count = 0;
	return &grown[d->n_repairs++];
}

static void count_repair(struct metrics_data *d, const char *object)
{
	struct metrics_repair *r = repair_of(d, object);

	if (r)
		r->count++;
}

/*
 * Every kind of object a node has, at 0 from the start: a series born at 1
 * shows no increase to rate() or increase(), and the README's alert on
 * fabricd_drift_repairs_total would miss the first repair of each kind.
 */
static void seed_repairs(struct metrics_data *d)
{
	static const char *const kinds[] = {"address",	"bridge", "fabric", "fdb",  "link",
					    "nftables", "peer",	  "route",  "vxlan"};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		repair_of(d, kinds[i]);
}

int monitor_open(const struct options *o, struct monitor **out)
{
	struct monitor *m = calloc(1, sizeof(*m));
	struct sockaddr_storage ss;
	char err[160];

	*out = NULL;
	if (!m)
		return -1;
	m->d.version = FABRICD_VERSION;
	seed_repairs(&m->d);
	m->metrics_file = o->metrics_file;
	m->file_interval_ms = o->metrics_file_interval_ms
				  ? o->metrics_file_interval_ms
				  : FABRICD_DEFAULT_METRICS_FILE_INTERVAL_MS;
	m->metrics = o->metrics_listen || o->metrics_file;
	if (o->metrics_listen) {
		if (metrics_parse_listen(o->metrics_listen, &ss, err, sizeof(err)) < 0) {
			log_error("%s", err);
			goto fail;
		}
		if (metrics_http_start(&ss, &m->http) < 0)
			goto fail;
	}
	/* the statistics come over the process's rtnetlink socket (netlink/nl.h) */
	if (m->metrics && !nl_route_shared()) {
		log_error("metrics: cannot open a netlink socket: %s", strerror(errno));
		goto fail;
	}
	/* even with rounds off (interval 0) this node answers its peers' probes */
	probe_start(o->probe_interval_ms, o->probe_file, &m->probe);
	*out = m;
	return 0;
fail:
	monitor_close(m);
	return -1;
}

static void free_data(struct metrics_data *d)
{
	free(d->peers);
	free(d->probes);
	free(d->zones);
	free(d->vnets);
	d->peers = NULL;
	d->probes = NULL;
	d->zones = NULL;
	d->vnets = NULL;
	d->n_peers = d->n_probes = d->n_zones = d->n_vnets = 0;
}

void monitor_close(struct monitor *m)
{
	if (!m)
		return;
	probe_stop(m->probe);
	metrics_http_stop(m->http);
	/*
	 * Nobody keeps it fresh any more: node_exporter would serve its last
	 * values, fabricd_fabric_up 1 included, for as long as it stayed.
	 */
	if (m->metrics_file && unlink(m->metrics_file) < 0 && errno != ENOENT)
		log_warn("metrics: cannot remove %s: %s", m->metrics_file, strerror(errno));
	free_data(&m->d);
	metrics_text_free(&m->text);
	free(m->d.repairs);
	free(m->peers);
	free(m);
}

void monitor_pass_begin(struct monitor *m)
{
	if (m)
		clock_gettime(CLOCK_MONOTONIC, &m->pass_start);
}

void monitor_pass_end(struct monitor *m, bool ok)
{
	struct timespec now;
	double seconds;

	if (!m)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	seconds = (double)(now.tv_sec - m->pass_start.tv_sec) +
		  (double)(now.tv_nsec - m->pass_start.tv_nsec) / 1e9;
	m->d.passes++;
	m->d.pass_errors += !ok;
	m->d.duration_sum += seconds;
	for (int i = 0; i < METRICS_N_BUCKETS; i++)
		m->d.duration_buckets[i] += seconds <= metrics_duration_buckets[i];
	metrics_http_outdated(m->http);
}

void monitor_reloaded(struct monitor *m)
{
	/* the new definition's file at the next tick, not an interval later */
	if (m)
		m->file_at = 0;
}

void monitor_definition(struct monitor *m, bool in_force)
{
	if (m)
		m->d.definition_in_force = in_force;
}

/* Whether op only comes with the re-creation of its link by another op of the plan. */
static bool comes_with_link(const struct plan *p, const struct op *op)
{
	for (size_t i = 0; op->ifname[0] && i < p->n; i++) {
		const struct op *c = &p->ops[i];

		if (c != op && !strcmp(c->ifname, op->ifname) &&
		    (c->type == OP_WG_CREATE || c->type == OP_BRIDGE_CREATE ||
		     c->type == OP_VXLAN_CREATE))
			return true;
	}
	return false;
}

void monitor_applied(struct monitor *m, const struct plan *p, unsigned int reasons)
{
	/*
	 * As report_plan() logs them: changes not asked for by a definition or a
	 * start (a retry carries the failed pass's reasons) are drift, and a
	 * re-created link is one repair with its settings.
	 */
	if (!m || (reasons & (REASON_STARTUP | REASON_DEFINITION)) || report_is_stage(reasons))
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct op_text t;

		if (report_op_is_stage(p, &p->ops[i], reasons) ||
		    report_follows_underlay(&p->ops[i], reasons) || comes_with_link(p, &p->ops[i]))
			continue;
		op_describe(&p->ops[i], &t);
		count_repair(&m->d, t.object);
	}
}

/* The endpoint-change count of a peer known before, by key (0 for a new one). */
static uint64_t old_changes(const struct monitor *m, const uint8_t *key)
{
	for (size_t i = 0; i < m->d.n_peers; i++) {
		if (!memcmp(m->peers[i].key, key, WG_KEY_LEN))
			return m->d.peers[i].endpoint_changes;
	}
	return 0;
}

static int copy_peers(struct monitor *m, const struct session *s)
{
	const struct desired_fabric *f = &s->want.fabric;
	struct metrics_peer *peers = calloc(f->n_peers + 1, sizeof(*peers));
	struct peer_state *state = calloc(f->n_peers + 1, sizeof(*state));

	if (!peers || !state) {
		free(peers);
		free(state);
		return -1;
	}
	for (size_t i = 0; i < f->n_peers; i++) {
		const uint8_t *key = f->peers[i].public_key;

		snprintf(peers[i].name, sizeof(peers[i].name), "%s",
			 s->cluster->nodes[f->peers[i].node].name);
		peers[i].endpoint_changes = old_changes(m, key);
		memcpy(state[i].key, key, WG_KEY_LEN);
		for (size_t j = 0; j < m->d.n_peers; j++) {
			if (!memcmp(m->peers[j].key, key, WG_KEY_LEN))
				state[i].endpoint = m->peers[j].endpoint;
		}
	}
	free(m->d.peers);
	free(m->peers);
	m->d.peers = peers;
	m->peers = state;
	m->d.n_peers = f->n_peers;
	return 0;
}

static int copy_zones(struct monitor *m, const struct session *s)
{
	const struct node_state *w = &s->want;
	struct metrics_zone *zones = calloc(w->n_zones + 1, sizeof(*zones));
	/* a vnet's device and its other transport's (a switch's hold, the standby) */
	struct metrics_vnet *vnets = calloc(2 * w->n_vnets + 1, sizeof(*vnets));
	size_t n = 0;

	if (!zones || !vnets) {
		free(zones);
		free(vnets);
		return -1;
	}
	for (size_t i = 0; i < w->n_zones; i++) {
		const struct zone *z = &s->cluster->zones[w->zones[i].zone];

		snprintf(zones[i].name, sizeof(zones[i].name), "%s", z->name);
		zones[i].transport = transport_name(z->transport);
		zones[i].mtu_policy = mtu_policy_name(z->mtu_policy);
		zones[i].mtu = w->zones[i].mtu;
		for (size_t v = 0; v < w->n_vnets; v++)
			zones[i].n_vnets += w->vnets[v].zone == w->zones[i].zone;
	}
	for (size_t v = 0; v < w->n_vnets; v++) {
		const struct desired_vnet *dv = &w->vnets[v];
		const char *devices[2] = {dv->vxlan, dv->other_vxlan};

		/* a device the node does not have is left out when read (read_vnets) */
		for (size_t k = 0; k < 2; k++) {
			const struct link_obs *l;

			if (!devices[k][0] || (k && !strcmp(devices[1], devices[0])))
				continue;
			/* by index: a link of that name that is not fabricd's is not counted */
			l = link_find(&s->have.links, devices[k]);
			vnets[n].ifindex = l && link_is_owned(l, w->owner) ? l->ifindex : 0;
			snprintf(vnets[n].name, sizeof(vnets[n].name), "%s", dv->name);
			snprintf(vnets[n].device, sizeof(vnets[n].device), "%s", devices[k]);
			snprintf(vnets[n].zone, sizeof(vnets[n].zone), "%s",
				 s->cluster->zones[dv->zone].name);
			vnets[n++].vni = dv->vni;
		}
	}
	free(m->d.zones);
	free(m->d.vnets);
	m->d.zones = zones;
	m->d.n_zones = w->n_zones;
	m->d.vnets = vnets;
	m->d.n_vnets = n;
	return 0;
}

/* One probe target per zone and member peer: the zone's first vnet carries its transport. */
static void configure_probes(struct monitor *m, const struct session *s)
{
	const struct node_state *w = &s->want;
	const struct cluster *c = s->cluster;
	struct probe_target *t;
	size_t n = 0, max = 0;

	for (size_t i = 0; i < w->n_zones; i++)
		max += c->zones[w->zones[i].zone].n_members;
	t = calloc(max + 1, sizeof(*t));
	if (!t)
		return;
	for (size_t i = 0; i < w->n_zones; i++) {
		const struct zone *z = &c->zones[w->zones[i].zone];
		const struct desired_vnet *first = NULL;

		for (size_t v = 0; v < w->n_vnets && !first; v++) {
			if (w->vnets[v].zone == w->zones[i].zone)
				first = &w->vnets[v];
		}
		for (size_t k = 0; first && w->zones[i].mtu && k < z->n_members; k++) {
			if (z->members[k] == s->self)
				continue;
			snprintf(t[n].peer, sizeof(t[n].peer), "%s", c->nodes[z->members[k]].name);
			snprintf(t[n].zone, sizeof(t[n].zone), "%s", z->name);
			snprintf(t[n].bridge, sizeof(t[n].bridge), "%s", first->name);
			/* what carries the frames now: secure while a switch back to plain holds */
			t[n].transport = transport_name(first->secure_holding || first->carried
							    ? TRANSPORT_SECURE
							    : z->transport);
			t[n].mtu = w->zones[i].mtu;
			t[n].old_receives = first->plain_receiving;
			n++;
		}
	}
	probe_configure(m->probe, c->name, c->nodes[s->self].name, t, n);
	free(t);
}

void monitor_converged(struct monitor *m, const struct session *s)
{
	if (!m)
		return;
	m->converged = true;
	m->backend = s->r.backend;
	snprintf(m->d.cluster, sizeof(m->d.cluster), "%s", s->cluster->name);
	snprintf(m->d.node, sizeof(m->d.node), "%s", s->cluster->nodes[s->self].name);
	m->d.fabric_mtu = s->want.fabric.mtu;
	m->d.vnets_held = s->r.n_held;
	m->d.evpn = false;
	for (size_t i = 0; i < s->want.n_vnets; i++)
		m->d.evpn = m->d.evpn || s->want.vnets[i].evpn;
	m->frr_pathspace = s->r.frr_pathspace;
	if (m->probe)
		configure_probes(m, s);
	if (m->metrics && (copy_peers(m, s) < 0 || copy_zones(m, s) < 0))
		log_warn("metrics: out of memory; the last metrics stay");
}

/* Counts the peers whose endpoint dev shows other than the one seen before. */
static void see_endpoints(struct monitor *m, const struct wg_device *dev)
{
	size_t j = 0;

	m->endpoints_at = monotonic_ms();
	for (size_t i = 0; dev && i < m->d.n_peers; i++) {
		const struct wg_peer *p;

		/* both usually in the same order: the search starts where the last ended */
		for (size_t k = 0; k < dev->n_peers; k++, j = (j + 1) % dev->n_peers) {
			if (!memcmp(dev->peers[j].public_key, m->peers[i].key, WG_KEY_LEN))
				break;
		}
		if (!dev->n_peers || memcmp(dev->peers[j].public_key, m->peers[i].key, WG_KEY_LEN))
			continue;
		p = &dev->peers[j];
		if (p->endpoint.ss_family &&
		    memcmp(&p->endpoint, &m->peers[i].endpoint, sizeof(p->endpoint))) {
			m->d.peers[i].endpoint_changes += m->peers[i].endpoint.ss_family != 0;
			m->peers[i].endpoint = p->endpoint;
		}
	}
}

void monitor_wg_seen(struct monitor *m, const struct wg_device *dev)
{
	if (m && m->metrics && m->converged)
		see_endpoints(m, dev);
}

static void read_peers(struct monitor *m)
{
	struct wg_device *dev = NULL;

	m->d.fabric_present = wg_get(m->backend, FABRIC_IFNAME, &dev) == 0 && dev;
	see_endpoints(m, dev);
	for (size_t i = 0; i < m->d.n_peers; i++) {
		struct metrics_peer *mp = &m->d.peers[i];
		const struct wg_peer *p = NULL;

		for (size_t j = 0; dev && j < dev->n_peers && !p; j++) {
			if (!memcmp(dev->peers[j].public_key, m->peers[i].key, WG_KEY_LEN))
				p = &dev->peers[j];
		}
		mp->present = p != NULL;
		if (!p)
			continue;
		mp->latest_handshake = p->last_handshake_sec;
		mp->rx_bytes = p->rx_bytes;
		mp->tx_bytes = p->tx_bytes;
	}
	wg_device_free(dev);
}

static void read_vnets(struct monitor *m)
{
	struct link_stats_table t = {0};
	struct nl_sock *rtnl = nl_route_shared();

	if (!rtnl || link_stats_dump(rtnl, &t) < 0)
		log_debug("metrics: cannot read link statistics: %s", strerror(errno));
	for (size_t i = 0; i < m->d.n_vnets; i++) {
		struct metrics_vnet *v = &m->d.vnets[i];
		/* by the index fabricd's device had: another link of that name is not counted */
		const struct link_stats *l = link_stats_find_index(&t, v->ifindex);

		v->present = l != NULL;
		if (!l)
			continue;
		v->rx_packets = l->stats.rx_packets;
		v->tx_packets = l->stats.tx_packets;
		v->rx_bytes = l->stats.rx_bytes;
		v->tx_bytes = l->stats.tx_bytes;
		v->rx_errors = l->stats.rx_errors;
		v->tx_errors = l->stats.tx_errors;
		v->rx_dropped = l->stats.rx_dropped;
		v->tx_dropped = l->stats.tx_dropped;
	}
	link_stats_free(&t);
}

static void read_guard(struct monitor *m)
{
	struct firewall_obs *fw = NULL;
	char owner[sizeof(m->d.cluster) + 16];

	/* a table of that name that is not this cluster's guards nothing of it */
	snprintf(owner, sizeof(owner), OWNER_PREFIX "%s", m->d.cluster);
	m->d.guard_present = firewall_observe_counters(&fw) == 0 && fw &&
			     (!m->d.cluster[0] || firewall_obs_owned(fw, owner));
	for (int i = 0; i < FW_N_COUNTERS; i++)
		m->d.guard_counter_present[i] =
		    fw && firewall_obs_counter(fw, (enum firewall_counter_id)i, &m->d.guard[i]);
	firewall_obs_free(fw);
}

static void read_probes(struct monitor *m)
{
	struct probe_result *r = NULL;
	size_t n = probe_results(m->probe, &r);

	free(m->d.probes);
	m->d.probes = calloc(n + 1, sizeof(*m->d.probes));
	m->d.n_probes = 0;
	for (size_t i = 0; m->d.probes && i < n; i++) {
		struct metrics_probe *p = &m->d.probes[m->d.n_probes];

		if (!r[i].measured)
			continue;
		snprintf(p->peer, sizeof(p->peer), "%s", r[i].target.peer);
		snprintf(p->zone, sizeof(p->zone), "%s", r[i].target.zone);
		p->transport = r[i].target.transport;
		p->reachable = r[i].reachable;
		p->black_hole = r[i].black_hole;
		p->rtt_seconds = r[i].rtt_seconds;
		p->mtu = r[i].target.mtu;
		p->largest = r[i].largest;
		m->d.n_probes++;
	}
	free(r);
}

/* Writes text to path atomically: the textfile collector never reads half a file. */
/*
 * path replaced in one rename, no link followed: the textfile directory may
 * belong to the exporter's user, who knows the daemon's PID and must not
 * make it (root) write elsewhere through a link planted at the temporary
 * name. 0644 whatever the umask: node_exporter reads it as another user.
 * No fsync: a file rewritten every few seconds needs none.
 */
static int replace_file(const char *path, const char *text, size_t len)
{
	char tmp[4096];
	int fd, ret = 0;

	/* per process: two daemons given one path must not rename each other's file away */
	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp); /* a link planted there, or what a killed daemon of this PID left */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) < 0)
		ret = -errno;
	if (!ret)
		ret = write_all(fd, text, len);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

static void write_file(struct monitor *m, const char *path, const char *text, size_t len)
{
	int ret = replace_file(path, text, len);

	if (!ret) {
		if (m->file_failed) /* the warning said it failed: say that it is over */
			log_info("metrics: %s written again", path);
		m->file_failed = 0;
		return;
	}
	if (m->file_failed++) /* logged once until it works again */
		return;
	log_warn("metrics: cannot write %s: %s; check that the directory exists and is writable",
		 path, strerror(-ret));
}

/* Read before the text is rendered, so only what outlives a pass counts. */
static uint64_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
}

/*
 * FRR is not fabricd's to start, and nothing tells the daemon when zebra or
 * bgpd dies: while they are down the node's EVPN routes are withdrawn and
 * its peers' MACs and flood lists go from its FDB. Said once when it
 * happens, once when they are back.
 */
static bool check_frr(struct monitor *m)
{
	char why[512];
	bool up, back;

	if (!m->d.evpn || monotonic_ms() < m->frr_check_at)
		return false;
	m->frr_check_at = monotonic_ms() + FRR_CHECK_MS;
	up = frr_running(m->frr_pathspace, why, sizeof(why));
	if (!up && (m->d.frr_running || !m->d.frr_checked))
		log_error("frr: %s; until it runs, this node's EVPN vnets neither advertise nor "
			  "learn their members",
			  why);
	back = up && m->d.frr_checked && !m->d.frr_running;
	if (back)
		log_info("frr: zebra and bgpd are running again");
	m->d.frr_running = up;
	m->d.frr_checked = true;
	return back;
}

/* Reads the counters and renders them into m->text. 0, or -ENOMEM. */
static int render(struct monitor *m)
{
	struct timespec now;

	read_peers(m);
	read_vnets(m);
	read_guard(m);
	read_probes(m);
	clock_gettime(CLOCK_REALTIME, &now);
	m->d.scrape_timestamp = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
	m->d.heap_in_use_bytes = heap_in_use();
	return metrics_render(&m->d, &m->text);
}

bool monitor_tick(struct monitor *m)
{
	bool frr_back = m && m->converged && check_frr(m);
	bool write_due, scrape_due;

	if (!m || !m->metrics || !m->converged)
		return frr_back;
	write_due = m->metrics_file && monotonic_ms() >= m->file_at;
	/* the first text at once (a scrape before it gets 503), then on demand */
	scrape_due = m->http && (!m->published || metrics_http_wanted(m->http));
	if (!write_due && !scrape_due) {
		/* the periodic check reads them while it can; when it cannot, here */
		if (m->http && monotonic_ms() - m->endpoints_at >= ENDPOINTS_MS)
			read_peers(m);
		return frr_back;
	}
	if (write_due)
		m->file_at = monotonic_ms() + m->file_interval_ms;
	if (render(m) < 0)
		return frr_back;
	if (write_due) {
		log_debug("metrics: %zu bytes rendered for %s", m->text.len, m->metrics_file);
		write_file(m, m->metrics_file, m->text.text, m->text.len);
	}
	if (m->http) { /* last: it trades the text for the buffer served before */
		if (scrape_due)
			log_debug("metrics: %zu bytes rendered for a scrape", m->text.len);
		metrics_http_publish(m->http, &m->text);
		m->published = true;
	}
	return frr_back;
}

int monitor_fd(const struct monitor *m)
{
	return m && m->http ? metrics_http_fd(m->http) : -1;
}
