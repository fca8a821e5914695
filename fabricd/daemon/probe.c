// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon/probe.c - the data-path probes (see probe.h) and the answers to the
 * peers' probes.
 *
 * Why a thread and not the daemon's epoll loop: a round waits for replies (up
 * to a second per lost probe, and a binary search after a loss), and
 * answering a peer must not wait for a pass either. One AF_PACKET socket,
 * bound to no device, receives the probe ethertype on every vnet bridge; its
 * ifindex tells which. The loop hands over targets and reads results under a
 * mutex; the thread owns the socket. A round asks a batch of zones at once.
 *
 * Why a frame from the bridge itself and not an ICMP ping: the bridges carry
 * no address (the host stays out of its tenants' networks), and a frame sent
 * on the bridge device takes the path of a guest's frame through the bridge,
 * the VXLAN device, WireGuard for a secure zone, the underlay, and the same
 * devices at the peer, at the zone MTU. Any guest of the vnet can see a probe
 * broadcast and could forge an answer; a probe is a diagnostic, not a control.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "daemon/probe.h"
#include "daemon/probe_entry.h"
#include "daemon/probe_frame.h"
#include "daemon/probe_state.h"

#define FULL_TIMEOUT_US 1000000 /* a first probe's reply may take this long */
#define STEP_MIN_US	50000	/* the binary search waits 4 RTT + 20 ms, within these */
#define STEP_MAX_US	1000000
#define SMALL_SIZE	256 /* a probe that passes where the MTU is the problem */
#define IDLE_POLL_MS	200

struct probe {
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	int wake; /* eventfd: stop */
	int sock;
	bool stop;			    /* under lock */
	bool configured;		    /* under lock */
	bool soon;			    /* under lock: a path changed, a round at once */
	char cluster[FABRICD_NAME_MAX + 1]; /* under lock; the thread keeps copies */
	char node[FABRICD_NAME_MAX + 1];
	size_t n;
	struct entry *entries; /* under lock */
	unsigned int interval_ms;
	char *state_file;
	/* the thread's own */
	char t_cluster[FABRICD_NAME_MAX + 1], t_node[FABRICD_NAME_MAX + 1];
	uint32_t seq, nonce;
	unsigned int seed;
	struct probe_state_health written; /* how writing the state file goes */
	uint8_t buf[PROBE_MAX_LEN];
};

/* The replies one request waits for. */
struct round {
	uint32_t seq;
	int ifindex;
	long long sent_us, sent_real_us; /* monotonic, and the wall clock for arrival stamps */
	struct entry *e;
	size_t n, remaining;
};

static const uint8_t broadcast[ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* The wall clock, which the kernel's receive timestamps (SO_TIMESTAMPNS) are on. */
static long long real_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int send_frame(struct probe *p, int ifindex, const uint8_t *mac, enum probe_type type,
		      uint16_t size, uint32_t seq, uint32_t nonce, const char *target)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET,
				  .sll_protocol = htons(PROBE_ETHERTYPE),
				  .sll_ifindex = ifindex,
				  .sll_halen = ETH_ALEN};
	struct probe_frame f = {.type = type, .size = size, .seq = seq, .nonce = nonce};
	uint8_t frame[PROBE_MAX_LEN];
	size_t len;

	snprintf(f.cluster, sizeof(f.cluster), "%s", p->t_cluster);
	snprintf(f.sender, sizeof(f.sender), "%s", p->t_node);
	snprintf(f.target, sizeof(f.target), "%s", target);
	len = probe_frame_encode(&f, frame, sizeof(frame));
	if (!len)
		return -EINVAL;
	memcpy(sll.sll_addr, mac, ETH_ALEN);
	if (sendto(p->sock, frame, len, 0, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return -errno; /* EMSGSIZE: bigger than the bridge's MTU, lost like a guest's */
	return 0;
}

/*
 * A reply's round trip: from the kernel's arrival stamp (arrived_real_us,
 * 0 when there is none), not from when the thread read it, which comes
 * after the requests of a whole batch were sent. A wall-clock step between
 * the two stamps is caught by the monotonic bound.
 */
static double round_trip(const struct round *r, long long arrived_real_us)
{
	long long bound = now_us() - r->sent_us, rtt = arrived_real_us - r->sent_real_us;

	return (double)(arrived_real_us && rtt >= 0 && rtt <= bound ? rtt : bound) / 1e6;
}

static void take_reply(struct round *r, const struct probe_frame *f, const struct sockaddr_ll *from,
		       long long arrived_real_us)
{
	if (f->seq != r->seq || from->sll_ifindex != r->ifindex)
		return;
	for (size_t i = 0; i < r->n; i++) {
		struct entry *e = &r->e[i];

		if (e->got || strcmp(e->r.target.peer, f->sender))
			continue;
		e->got = true;
		e->got_rtt = round_trip(r, arrived_real_us);
		memcpy(e->mac, from->sll_addr, ETH_ALEN);
		e->mac_known = true;
		r->remaining--;
	}
}

/* Reads every pending frame: answers requests, records replies to the n rounds waiting. */
static void receive(struct probe *p, struct round *rounds, size_t n)
{
	struct sockaddr_ll from;
	struct probe_frame f;

	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(struct timespec))];
			struct cmsghdr align;
		} control;
		struct iovec iov = {.iov_base = p->buf, .iov_len = sizeof(p->buf)};
		struct msghdr msg = {.msg_name = &from,
				     .msg_namelen = sizeof(from),
				     .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = control.buf,
				     .msg_controllen = sizeof(control.buf)};
		ssize_t len = recvmsg(p->sock, &msg, 0);
		long long arrived = 0;

		if (len < 0)
			return;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(c), sizeof(ts));
				arrived = ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
			}
		}
		if (from.sll_pkttype == PACKET_OUTGOING || from.sll_pkttype == PACKET_OTHERHOST ||
		    probe_frame_decode(p->buf, (size_t)len, &f) < 0 ||
		    strcmp(f.cluster, p->t_cluster) || !strcmp(f.sender, p->t_node))
			continue;
		if (f.type == PROBE_REQUEST && (!f.target[0] || !strcmp(f.target, p->t_node)))
			send_frame(p, from.sll_ifindex, from.sll_addr, PROBE_REPLY, f.size, f.seq,
				   f.nonce, f.sender);
		else if (f.type == PROBE_REPLY && !strcmp(f.target, p->t_node) &&
			 f.nonce == p->nonce)
			for (size_t i = 0; i < n; i++)
				take_reply(&rounds[i], &f, &from, arrived);
	}
}

/* A flag the loop sets under the lock (stop, soon), read by the thread. */
static bool flag_set(struct probe *p, const bool *flag)
{
	bool set;

	pthread_mutex_lock(&p->lock);
	set = *flag;
	pthread_mutex_unlock(&p->lock);
	return set;
}

static bool stopping(struct probe *p)
{
	return flag_set(p, &p->stop);
}

static bool all_answered(const struct round *rounds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (rounds[i].remaining)
			return false;
	}
	return true;
}

/* The results, written to the state file for `fabricd status`. */
static void write_snapshot(struct probe *p)
{
	struct probe_result *rs;
	size_t n = probe_results(p, &rs);

	if (rs && p->state_file)
		probe_state_write(p->state_file, p->t_cluster, p->t_node, p->interval_ms, rs, n,
				  &p->written);
	free(rs);
}

/* Answers and collects until deadline, every round is complete, or the daemon stops. */
static void pump(struct probe *p, struct round *rounds, size_t n, long long deadline)
{
	struct pollfd fds[2] = {{.fd = p->sock, .events = POLLIN},
				{.fd = p->wake, .events = POLLIN}};

	for (;;) {
		long long left = deadline - now_us();

		if ((n && all_answered(rounds, n)) || left <= 0 || stopping(p))
			return;
		if (poll(fds, 2, (int)((left + 999) / 1000)) <= 0)
			continue;
		if (fds[0].revents & POLLIN)
			receive(p, rounds, n);
		if (fds[1].revents & POLLIN) {
			uint64_t v;

			/* drained, or poll would return at once until the deadline */
			if (read(p->wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
				log_debug("probe: eventfd: %s", strerror(errno));
			if (!n) /* idle: the caller looks at what woke it */
				return;
			/* mid-round, a configure changed a path: its old result goes now */
			if (flag_set(p, &p->soon))
				write_snapshot(p);
		}
	}
}

/*
 * Sends one request of size bytes to e's peer (unicast once its MAC is
 * known) or, e NULL, to all n of es; r then waits for the replies. A
 * request the bridge refuses (bigger than its MTU) is lost like a guest's.
 */
static void request(struct probe *p, struct round *r, int ifindex, struct entry *es, size_t n,
		    struct entry *e, unsigned int size)
{
	*r = (struct round){.seq = ++p->seq, .ifindex = ifindex, .e = e ? e : es, .n = e ? 1 : n};
	for (size_t i = 0; i < r->n; i++)
		r->e[i].got = false;
	r->remaining = r->n;
	r->sent_us = now_us();
	r->sent_real_us = real_us();
	if (send_frame(p, ifindex, e && e->mac_known ? e->mac : broadcast, PROBE_REQUEST,
		       (uint16_t)size, r->seq, p->nonce, e ? e->r.target.peer : "") < 0)
		r->remaining = 0;
}

/* One request to e's peer; waits for its reply. */
static void ask(struct probe *p, int ifindex, struct entry *e, unsigned int size,
		long long timeout_us)
{
	struct round r;

	request(p, &r, ifindex, NULL, 0, e, size);
	pump(p, &r, 1, r.sent_us + timeout_us);
}

/* Twice at most: one lost probe is not yet a lost path. */
static bool passes(struct probe *p, int ifindex, struct entry *e, unsigned int size,
		   long long timeout_us)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		ask(p, ifindex, e, size, timeout_us);
		if (e->got) {
			e->r.rtt_seconds = e->got_rtt;
			return true;
		}
	}
	return false;
}

static long long step_timeout(double rtt_seconds)
{
	long long t = (long long)(rtt_seconds * 4e6) + 20000;

	return t < STEP_MIN_US ? STEP_MIN_US : t > STEP_MAX_US ? STEP_MAX_US : t;
}

/*
 * The peer answered a small probe but not the zone MTU: the largest size
 * that passes, found by a binary search with timeouts from its round trip.
 */
static void search(struct probe *p, int ifindex, struct entry *e)
{
	unsigned int mtu = e->r.target.mtu, lo = mtu < SMALL_SIZE ? mtu : SMALL_SIZE, hi = mtu;
	long long step = step_timeout(e->r.rtt_seconds);

	while (hi - lo > 1 && !stopping(p)) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (passes(p, ifindex, e, mid, step))
			lo = mid;
		else
			hi = mid;
	}
	/*
	 * The zone MTU failed before the search: a path that came back meanwhile
	 * (a link up again, a peer's daemon restarted) would read as a black hole
	 * at mtu - 1. It is one only if the full size still fails now.
	 */
	if (lo < mtu && !stopping(p) && passes(p, ifindex, e, mtu, step))
		lo = mtu;
	e->r.reachable = true;
	e->r.largest = lo;
	e->r.black_hole = lo < mtu;
}

/* How many entries from es on belong to es[0]'s zone (the targets come grouped by zone). */
static size_t zone_len(const struct entry *es, size_t n)
{
	size_t k = 1;

	while (k < n && !strcmp(es[k].r.target.zone, es[0].r.target.zone))
		k++;
	return n ? k : 0;
}

/* A zone of a batch: its entries, its bridge. */
struct zone_span {
	struct entry *es;
	size_t n;
	int ifindex; /* 0: the bridge is gone, every peer unreachable */
};

/*
 * One attempt's requests (at most one round per entry): a broadcast for each
 * zone with a peer that has not answered, but small ones go unicast to the
 * peers whose MAC is known (a broadcast per peer went to all the zone's
 * remotes: 63 silent peers cost 2 x 63 x 63 frames a zone). How many sent.
 */
static size_t send_requests(struct probe *p, struct zone_span *spans, size_t n_spans, bool small,
			    struct round *rounds)
{
	size_t nr = 0;

	for (size_t z = 0; z < n_spans; z++) {
		struct zone_span *s = &spans[z];
		unsigned int mtu = s->es[0].r.target.mtu;
		unsigned int size = small && mtu > SMALL_SIZE ? SMALL_SIZE : mtu;
		bool zone_wide = false;

		for (size_t i = 0; s->ifindex && i < s->n; i++) {
			struct entry *e = &s->es[i];

			if (e->full || (small && e->small))
				continue;
			if (small && e->mac_known)
				request(p, &rounds[nr++], s->ifindex, NULL, 0, e, size);
			else
				zone_wide = true;
		}
		if (zone_wide)
			request(p, &rounds[nr++], s->ifindex, s->es, s->n, NULL, size);
	}
	return nr;
}

/* Marks who answered the last requests (full or small), with the round trip. */
static void record_answers(struct zone_span *spans, size_t n_spans, bool small)
{
	for (size_t z = 0; z < n_spans; z++) {
		for (size_t i = 0; i < spans[z].n; i++) {
			struct entry *e = &spans[z].es[i];
			bool *passed = small ? &e->small : &e->full;

			if (e->got && !*passed) {
				*passed = true;
				e->r.rtt_seconds = e->got_rtt;
			}
			e->got = false;
		}
	}
}

/*
 * Each span's peers at the zone MTU, all zones at once, then the peers that
 * did not answer with a small probe, all at once; each twice at most (one
 * lost probe is not yet a lost path). rounds has room for one per entry.
 */
static void ask_all(struct probe *p, struct zone_span *spans, size_t n_spans, struct round *rounds)
{
	for (int small = 0; small < 2; small++) {
		for (int attempt = 0; attempt < 2 && !stopping(p); attempt++) {
			size_t nr = send_requests(p, spans, n_spans, small, rounds);

			if (!nr)
				break;
			pump(p, rounds, nr, now_us() + FULL_TIMEOUT_US);
			record_answers(spans, n_spans, small);
		}
	}
}

/*
 * Every peer of the batch's zones (es, grouped by zone). The zones are
 * asked at once, so peers that do not answer cost their timeouts once a
 * batch, not once a zone; only a black hole's binary search goes peer by
 * peer.
 */
static void measure_batch(struct probe *p, struct entry *es, size_t n)
{
	struct zone_span *spans = calloc(n, sizeof(*spans));
	struct round *rounds = calloc(n, sizeof(*rounds));
	size_t n_spans = 0;

	for (size_t at = 0; spans && rounds && at < n; at += spans[n_spans++].n) {
		spans[n_spans].es = es + at;
		spans[n_spans].n = zone_len(es + at, n - at);
		spans[n_spans].ifindex = (int)if_nametoindex(es[at].r.target.bridge);
	}
	if (!spans || !rounds)
		goto out;
	for (size_t i = 0; i < n; i++)
		es[i].full = es[i].small = false;
	ask_all(p, spans, n_spans, rounds);
	for (size_t z = 0; z < n_spans && !stopping(p); z++) {
		for (size_t i = 0; i < spans[z].n; i++) {
			struct entry *e = &spans[z].es[i];

			e->r.measured = true;
			e->r.checked_at = (long long)time(NULL);
			e->r.reachable = e->full || e->small;
			e->r.black_hole = false;
			e->r.largest = e->full ? e->r.target.mtu : 0;
			if (!e->full && e->small)
				search(p, spans[z].ifindex, e);
		}
	}
out:
	free(spans);
	free(rounds);
}

/* Logs a result once per change; a healthy path is quiet. */
static void report(const char *node, struct entry *e)
{
	const struct probe_result *r = &e->r;
	enum reported now = !r->reachable   ? REP_UNREACHABLE
			    : r->black_hole ? REP_BLACK_HOLE
					    : REP_OK;
	const char *peer = r->target.peer, *zone = r->target.zone, *tr = r->target.transport;

	if (now == e->reported && (now != REP_BLACK_HOLE || r->largest == e->reported_size))
		return;
	if (now == REP_BLACK_HOLE)
		log_warn("probe %s -> %s, zone %s (%s): MTU black hole: %u-byte frames are lost, "
			 "%u bytes pass; guests at MTU %u lose large packets: check the underlay "
			 "MTU between the two nodes",
			 node, peer, zone, tr, r->target.mtu, r->largest, r->target.mtu);
	else if (now == REP_UNREACHABLE)
		log_warn(
		    "probe %s -> %s, zone %s (%s): no reply, not even at %u bytes: the "
		    "VXLAN path is cut (%s), %s runs zone %s with another transport (its "
		    "definition differs), or fabricd run is not running there",
		    node, peer, zone, tr, r->target.mtu < SMALL_SIZE ? r->target.mtu : SMALL_SIZE,
		    strcmp(tr, "secure") ? "the underlay between the two nodes"
					 : "WireGuard: see the peer's handshake in fabricd status",
		    peer, zone);
	else if (e->reported != REP_NONE)
		log_info("probe %s -> %s, zone %s (%s): frames of %u bytes pass again", node, peer,
			 zone, tr, r->target.mtu);
	e->reported = now;
	e->reported_size = r->largest;
}

static void merge_round(struct probe *p, const struct entry *es, size_t n);

/*
 * One round, a batch of zones at a time: copy their entries, measure
 * without the lock, merge back. A batch, not every zone at once: at 64 nodes
 * and 64 zones a copy of every entry is 0.9 MiB (measured with massif: a
 * quarter of the daemon's heap), and 64 zones' full-size broadcasts at once
 * would be 4,000 frames of 1.4 KB in one burst into wireguard-go. A
 * configure meanwhile may shift the zones; the round goes on from the same
 * position, and merging finds each entry by (peer, zone) wherever it moved.
 */
#define BATCH_ZONES   8
#define BATCH_ENTRIES 512

/* How many entries from es on make the next batch: whole zones, at least one. */
static size_t batch_len(const struct entry *es, size_t n)
{
	size_t len = 0;

	for (size_t zones = 0; len < n && zones < BATCH_ZONES; zones++) {
		size_t k = zone_len(es + len, n - len);

		if (len && len + k > BATCH_ENTRIES)
			break;
		len += k;
	}
	return len;
}

/*
 * The state file is written at the end of a round, when a path changes, and
 * during a long round (2 s a zone and peer that does not answer) this often:
 * results older than status's staleness limit say a running daemon is gone.
 */
#define STATE_EVERY_US 5000000LL

static void run_round(struct probe *p)
{
	long long written = now_us();
	struct entry *es;
	size_t n;

	for (size_t at = 0;;) {
		pthread_mutex_lock(&p->lock);
		n = at < p->n ? batch_len(p->entries + at, p->n - at) : 0;
		es = n ? malloc(n * sizeof(*es)) : NULL;
		if (es)
			memcpy(es, p->entries + at, n * sizeof(*es));
		pthread_mutex_unlock(&p->lock);
		if (!es)
			break;
		measure_batch(p, es, n);
		pthread_mutex_lock(&p->lock);
		merge_round(p, es, n);
		pthread_mutex_unlock(&p->lock);
		free(es);
		at += n;
		if (stopping(p))
			return;
		if (now_us() - written >= STATE_EVERY_US) {
			write_snapshot(p);
			written = now_us();
		}
	}
	write_snapshot(p);
}

/* interval +- 20 % */
static long long jittered(struct probe *p)
{
	long long ms = p->interval_ms;

	return (ms * 8 / 10 + (long long)(rand_r(&p->seed) % (ms * 4 / 10 + 1))) * 1000;
}

static void *probe_thread(void *arg)
{
	struct probe *p = arg;
	long long next = 0;

	log_thread_uncaptured(); /* its warnings are no pass's: never held with one's */
	for (;;) {
		bool configured, soon;

		pthread_mutex_lock(&p->lock);
		configured = p->configured;
		soon = p->soon;
		p->soon = false;
		snprintf(p->t_cluster, sizeof(p->t_cluster), "%s", p->cluster);
		snprintf(p->t_node, sizeof(p->t_node), "%s", p->node);
		pthread_mutex_unlock(&p->lock);
		if (stopping(p))
			break;
		if (!configured) {
			poll(&(struct pollfd){.fd = p->wake, .events = POLLIN}, 1, IDLE_POLL_MS);
			continue;
		}
		if (!next) /* the first round soon, but not on every node at once */
			next = now_us() + 200000 + (p->interval_ms ? jittered(p) / 4 : 0);
		else if (soon) {
			/* a changed path's old result goes now, not when the round ends */
			write_snapshot(p);
			next = now_us();
		}
		if (p->interval_ms && now_us() >= next) {
			run_round(p);
			next = now_us() + jittered(p);
		}
		/* answer the peers meanwhile */
		pump(p, NULL, 0,
		     p->interval_ms && next < now_us() + IDLE_POLL_MS * 1000LL
			 ? next
			 : now_us() + IDLE_POLL_MS * 1000LL);
	}
	return NULL;
}

int probe_start(unsigned int interval_ms, const char *state_file, struct probe **out)
{
	struct probe *p = calloc(1, sizeof(*p));
	uint32_t nonce = 0;
	int fd;

	*out = NULL;
	if (!p)
		return -1;
	p->wake = p->sock = -1;
	pthread_mutex_init(&p->lock, NULL);
	p->interval_ms = interval_ms;
	p->state_file = state_file ? strdup(state_file) : NULL;
	p->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->sock =
	    socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(PROBE_ETHERTYPE));
	/* each frame's arrival, for round trips that do not count the thread's delays */
	if (p->sock >= 0 &&
	    setsockopt(p->sock, SOL_SOCKET, SO_TIMESTAMPNS, &(int){1}, sizeof(int)) < 0)
		log_debug("probe: SO_TIMESTAMPNS: %s", strerror(errno));
	if (p->wake < 0 || p->sock < 0) {
		log_warn("probe: cannot open a packet socket: %s (fabricd needs CAP_NET_RAW); "
			 "running without data-path probes",
			 strerror(errno));
		goto fail;
	}
	/* tells this run's replies from a previous run's, which may still be in flight */
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &nonce, sizeof(nonce)) != sizeof(nonce))
			nonce = 0;
		close(fd);
	}
	p->nonce = nonce ^ (uint32_t)getpid() ^ (uint32_t)now_us();
	p->seed = p->nonce;
	if (p->state_file && strncmp(p->state_file, "/run/fabricd/", 13) == 0)
		mkdir("/run/fabricd", 0755); /* the default's directory; EEXIST is fine */
	if (pthread_create(&p->thread, NULL, probe_thread, p) != 0) {
		log_warn("probe: cannot start its thread; running without data-path probes");
		goto fail;
	}
	p->thread_started = true;
	*out = p;
	return 0;
fail:
	probe_stop(p);
	return -1;
}

/* Takes over what a round measured for one entry (its target as configure left it). */
static void merge_entry(struct probe *p, struct entry *e, const struct entry *done)
{
	struct probe_target t = e->r.target;

	e->r = done->r;
	e->r.target = t;
	memcpy(e->mac, done->mac, ETH_ALEN);
	e->mac_known = done->mac_known;
	report(p->t_node, e);
}

/*
 * A batch's results es into p's entries, which configure may have replaced
 * meanwhile: each entry takes the last measured result of its (peer, zone),
 * found in a sorted index (a scan per entry made the merge quadratic, 4096
 * targets, under p->lock). Under p->lock.
 */
static void merge_round(struct probe *p, const struct entry *es, size_t n)
{
	struct entry_index done_by = entry_index_make(es, n, true);

	for (size_t k = 0; k < p->n && !p->stop; k++) {
		const struct entry *done = entry_find(&done_by, &p->entries[k].r.target);

		/* a zone that switched transport or MTU meanwhile: the old path, never
		 * reported as the new one's (the next round measures that) */
		if (done && probe_same_path(&done->r.target, &p->entries[k].r.target))
			merge_entry(p, &p->entries[k], done);
	}
	free(done_by.by);
}

/*
 * Each target's entry, with what the old one of its (peer, zone) had: its
 * peer's MAC and what was logged, and its results while it measures the
 * same path (an old result under a new transport or MTU would report the
 * old path). The old entries are looked up in a sorted index: a node of 64
 * with 65 zones has 4096 targets, and a scan per target took 80 ms of each
 * pass. Under p->lock.
 */
static bool carry_over(const struct probe *p, const struct probe_target *t, size_t n,
		       struct entry *es)
{
	struct entry_index old_by = entry_index_make(p->entries, p->n, false);
	bool changed = false;

	for (size_t i = 0; i < n; i++) {
		const struct entry *old = entry_find(&old_by, &t[i]);

		changed |= !old || !probe_same_path(&old->r.target, &t[i]);
		if (old) {
			es[i] = *old;
			if (!probe_same_path(&old->r.target, &t[i]))
				memset(&es[i].r, 0, sizeof(es[i].r)); /* measured again */
		}
		es[i].r.target = t[i];
	}
	free(old_by.by);
	return changed;
}

void probe_configure(struct probe *p, const char *cluster, const char *node,
		     const struct probe_target *t, size_t n)
{
	uint64_t one = 1;
	struct entry *es;
	bool soon;

	if (!p)
		return;
	es = calloc(n + 1, sizeof(*es));
	if (!es)
		return;
	/* without rounds nothing renews an earlier daemon's results: status said STALE */
	if (!p->configured && !p->interval_ms && p->state_file)
		probe_state_forget(p->state_file, cluster, node);
	pthread_mutex_lock(&p->lock);
	/* the first configuration keeps its jittered start: not every node at once */
	soon = carry_over(p, t, n, es) && p->configured;
	p->soon |= soon;
	free(p->entries);
	p->entries = es;
	p->n = n;
	snprintf(p->cluster, sizeof(p->cluster), "%s", cluster);
	snprintf(p->node, sizeof(p->node), "%s", node);
	p->configured = true;
	pthread_mutex_unlock(&p->lock);
	if (soon && write(p->wake, &one, sizeof(one)) < 0)
		log_debug("probe: eventfd: %s", strerror(errno));
}

size_t probe_results(struct probe *p, struct probe_result **out)
{
	size_t n;

	*out = NULL;
	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	n = p->n;
	*out = calloc(n + 1, sizeof(**out));
	for (size_t i = 0; *out && i < n; i++)
		(*out)[i] = p->entries[i].r;
	pthread_mutex_unlock(&p->lock);
	return *out ? n : 0;
}

void probe_stop(struct probe *p)
{
	uint64_t one = 1;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_mutex_unlock(&p->lock);
	if (p->wake >= 0 && write(p->wake, &one, sizeof(one)) < 0)
		log_debug("probe: eventfd: %s", strerror(errno));
	if (p->thread_started)
		pthread_join(p->thread, NULL);
	if (p->state_file && p->configured)
		probe_state_mark_stopped(p->state_file, p->t_cluster, p->t_node);
	if (p->sock >= 0)
		close(p->sock);
	if (p->wake >= 0)
		close(p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p->entries);
	free(p->state_file);
	free(p);
}
