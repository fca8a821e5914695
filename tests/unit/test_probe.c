// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_probe.c - probe_configure (daemon/probe.h): a target that stays keeps
 * its peer's MAC and what was logged about it, wherever it moved in the list,
 * and its results while its transport and MTU stay (another MTU or transport
 * is another path: measured again); a new target starts empty; of two old
 * entries of one (peer, zone) the last is the one kept. Random target lists,
 * with such duplicates, must carry over what the plain scan below (the code
 * before the index) carries over. A round's results merge back into entries
 * that configure replaced while the round ran, as the nested scan before
 * merge_round's index did.
 *
 * Why probe.c is included: the results are the probe thread's, filled in by
 * rounds on real bridges; here they are set by hand on a struct probe
 * without a thread or a socket.
 */
#include "daemon/probe.c"

#include "unit.h"

static struct probe *probe_new(void)
{
	struct probe *p = calloc(1, sizeof(*p));

	p->wake = p->sock = -1;
	pthread_mutex_init(&p->lock, NULL);
	return p;
}

static struct probe_target target(const char *peer, const char *zone, unsigned int mtu)
{
	struct probe_target t = {.transport = "plain", .mtu = mtu};

	snprintf(t.peer, sizeof(t.peer), "%s", peer);
	snprintf(t.zone, sizeof(t.zone), "%s", zone);
	snprintf(t.bridge, sizeof(t.bridge), "b%s", zone);
	return t;
}

/* An entry with results only this mark has: largest, a MAC byte, what was logged. */
static void measured(struct entry *e, unsigned int mark)
{
	e->r.measured = e->r.reachable = e->mac_known = true;
	e->r.largest = mark;
	e->r.checked_at = 1000 + mark;
	e->mac[5] = (uint8_t)mark;
	e->reported = REP_BLACK_HOLE;
	e->reported_size = mark;
}

static void test_carry_over(void)
{
	struct probe_target old[] = {target("pve2", "red", 1390), target("pve3", "red", 1390),
				     target("pve2", "blue", 1390), target("red", "pve2", 1390)};
	struct probe_target now[] = {target("pve2", "blue", 1420), target("pve4", "red", 1390),
				     target("pve3", "red", 1390), target("pve2", "red", 1380),
				     target("pve3", "blue", 1390)};
	struct probe *p = probe_new();
	struct probe_result *r;
	size_t n;

	probe_configure(p, "c", "pve1", old, 4);
	CHECK_INT(p->n, 4, "configured");
	for (unsigned int i = 0; i < 4; i++)
		measured(&p->entries[i], 10 + i);
	probe_configure(p, "c", "pve1", now, 5);
	CHECK_INT(p->n, 5, "reconfigured");
	CHECK(!p->entries[0].r.measured && !p->entries[0].r.largest,
	      "pve2 blue moved up, at another MTU: measured again");
	CHECK_INT(p->entries[0].r.target.mtu, 1420, "with the new target's MTU");
	CHECK_INT(p->entries[0].mac[5], 12, "and its peer's MAC");
	CHECK_INT(p->entries[0].reported, REP_BLACK_HOLE, "and what was logged");
	CHECK_INT(p->entries[0].reported_size, 12, "at which size");
	CHECK(!p->entries[1].r.measured && !p->entries[1].mac_known &&
		  p->entries[1].reported == REP_NONE && !p->entries[1].r.largest,
	      "a new target starts empty");
	CHECK_STR(p->entries[1].r.target.peer, "pve4", "as its target");
	CHECK_INT(p->entries[2].r.largest, 11, "pve3 red, the same path: its results kept");
	CHECK(!p->entries[3].r.measured, "pve2 red moved down, at another MTU: measured again");
	CHECK_INT(p->entries[3].mac[5], 10, "its peer's MAC kept");
	CHECK_INT(p->entries[3].r.target.mtu, 1380, "its new MTU");
	CHECK(!p->entries[4].r.measured, "pve3 blue is new (pve3 red is another zone)");
	CHECK_STR(p->cluster, "c", "cluster");
	CHECK_STR(p->node, "pve1", "node");
	CHECK(p->configured, "rounds may start");
	n = probe_results(p, &r);
	CHECK_INT(n, 5, "results");
	CHECK(r && r[2].largest == 11 && !strcmp(r[0].target.zone, "blue") && !r[1].measured,
	      "in the new order");
	free(r);
	probe_configure(p, "c", "pve1", NULL, 0);
	CHECK_INT(p->n, 0, "no targets");
	probe_stop(p);
}

/* A zone switched transport at the same MTU: another path, whose old result must not show. */
static void test_transport_switch(void)
{
	struct probe_target old[] = {target("pve2", "red", 1390)};
	struct probe_target now[] = {target("pve2", "red", 1390)};
	struct probe *p = probe_new();

	now[0].transport = "secure";
	probe_configure(p, "c", "pve1", old, 1);
	measured(&p->entries[0], 30);
	probe_configure(p, "c", "pve1", now, 1);
	CHECK(!p->entries[0].r.measured && !p->entries[0].r.reachable, "measured again");
	CHECK_STR(p->entries[0].r.target.transport, "secure", "under its new transport");
	CHECK_INT(p->entries[0].mac[5], 30, "its peer's MAC kept");
	probe_stop(p);
}

/* One (peer, zone) twice before: the last one's results (the scan overwrote with each match). */
static void test_duplicates(void)
{
	struct probe_target old[] = {target("pve2", "red", 1390), target("pve3", "red", 1390),
				     target("pve2", "red", 1390)};
	struct probe_target now[] = {target("pve2", "red", 1390), target("pve2", "red", 1390)};
	struct probe *p = probe_new();

	probe_configure(p, "c", "pve1", old, 3);
	for (unsigned int i = 0; i < 3; i++)
		measured(&p->entries[i], 20 + i);
	probe_configure(p, "c", "pve1", now, 2);
	CHECK_INT(p->entries[0].r.largest, 22, "the last old entry of the pair");
	CHECK_INT(p->entries[1].r.largest, 22, "for each new one of the pair");
	probe_stop(p);
}

/* probe_configure's scan before its index: the reference for the random lists. */
static void ref_carry_over(const struct entry *olds, size_t n_old, const struct probe_target *t,
			   size_t n, struct entry *es)
{
	for (size_t i = 0; i < n; i++) {
		memset(&es[i], 0, sizeof(es[i]));
		es[i].r.target = t[i];
		for (size_t k = 0; k < n_old; k++) {
			const struct entry *old = &olds[k];

			if (strcmp(old->r.target.peer, t[i].peer) ||
			    strcmp(old->r.target.zone, t[i].zone))
				continue;
			es[i] = *old;
			if (old->r.target.mtu != t[i].mtu ||
			    strcmp(old->r.target.transport, t[i].transport))
				memset(&es[i].r, 0, sizeof(es[i].r));
			es[i].r.target = t[i];
		}
	}
}

/* Field by field: struct copies need not copy the padding. */
static bool same_entry(const struct entry *a, const struct entry *b)
{
	const struct probe_result *x = &a->r, *y = &b->r;

	return !strcmp(x->target.peer, y->target.peer) && !strcmp(x->target.zone, y->target.zone) &&
	       !strcmp(x->target.bridge, y->target.bridge) &&
	       x->target.transport == y->target.transport && x->target.mtu == y->target.mtu &&
	       x->measured == y->measured && x->reachable == y->reachable &&
	       x->black_hole == y->black_hole && x->largest == y->largest &&
	       x->rtt_seconds == y->rtt_seconds && x->checked_at == y->checked_at &&
	       !memcmp(a->mac, b->mac, ETH_ALEN) && a->mac_known == b->mac_known &&
	       a->reported == b->reported && a->reported_size == b->reported_size &&
	       a->got == b->got && a->got_rtt == b->got_rtt;
}

static unsigned int seed = 4242;

static unsigned int rnd(unsigned int n)
{
	return (unsigned int)rand_r(&seed) % n;
}

static void random_targets(struct probe_target *t, size_t n, unsigned int pool)
{
	for (size_t i = 0; i < n; i++) {
		char peer[16], zone[16];

		/* names of one pool in both fields: a peer's name may be another's zone's */
		snprintf(peer, sizeof(peer), "n%u", rnd(pool));
		snprintf(zone, sizeof(zone), "n%u", rnd(pool));
		/* two MTUs: a pair keeps its path about half the time, or changes it */
		t[i] = target(peer, zone, 1390 + 10 * rnd(2));
	}
}

static void test_random(void)
{
	struct probe_target old[80], now[80];
	struct entry want[80];
	size_t kept = 0, fresh = 0;

	for (int round = 0; round < 500; round++) {
		unsigned int pool = 1 + rnd(12);
		size_t n_old = rnd(81), n = rnd(81);
		struct probe *p = probe_new();
		struct entry *before;

		random_targets(old, n_old, pool);
		random_targets(now, n, pool);
		probe_configure(p, "c", "pve1", old, n_old);
		for (size_t i = 0; i < n_old; i++)
			measured(&p->entries[i], 1 + (unsigned int)i);
		before = calloc(n_old + 1, sizeof(*before));
		memcpy(before, p->entries, n_old * sizeof(*before));
		ref_carry_over(before, n_old, now, n, want);
		probe_configure(p, "c", "pve1", now, n);
		CHECK_INT(p->n, n, "round %d", round);
		for (size_t i = 0; i < n; i++) {
			CHECK(same_entry(&p->entries[i], &want[i]), "round %d, %zu", round, i);
			kept += want[i].r.measured;
			fresh += !want[i].r.measured;
		}
		free(before);
		probe_stop(p);
	}
	CHECK(kept > 100 && fresh > 100, "the rounds cover it: %zu kept, %zu new", kept, fresh);
}

/*
 * run_round's merge before its index: each entry takes the last measured
 * result of its pair, unless that was measured on another path (transport
 * or MTU changed meanwhile: the old path's result is not the new one's).
 */
static void ref_merge(struct entry *entries, size_t n_entries, const struct entry *es, size_t n)
{
	for (size_t k = 0; k < n_entries; k++) {
		struct entry *e = &entries[k];
		const struct entry *last = NULL;

		for (size_t i = 0; i < n; i++) {
			if (!probe_target_cmp(&e->r.target, &es[i].r.target) && es[i].r.measured)
				last = &es[i];
		}
		if (!last || !probe_same_path(&e->r.target, &last->r.target))
			continue;
		struct probe_target t = e->r.target;

		e->r = last->r;
		e->r.target = t;
		memcpy(e->mac, last->mac, ETH_ALEN);
		e->mac_known = last->mac_known;
	}
}

/* A round measured some of the old targets; configure changed the list meanwhile. */
static void test_merge_random(void)
{
	struct probe_target old[80], now[80];
	size_t merged = 0;

	for (int round = 0; round < 500; round++) {
		unsigned int pool = 1 + rnd(12);
		size_t n_old = rnd(81), n = rnd(81);
		struct probe *p = probe_new();
		struct entry *es, *want;

		random_targets(old, n_old, pool);
		random_targets(now, n, pool);
		probe_configure(p, "c", "pve1", old, n_old);
		es = calloc(n_old + 1, sizeof(*es));
		memcpy(es, p->entries, n_old * sizeof(*es));
		for (size_t i = 0; i < n_old; i++) {
			if (rnd(3)) {
				measured(&es[i], 100 + (unsigned int)i);
				es[i].reported = REP_OK; /* healthy: report() stays quiet */
			}
		}
		probe_configure(p, "c", "pve1", now, n);
		for (size_t k = 0; k < n; k++)
			p->entries[k].reported = REP_OK;
		struct entry_index idx = entry_index_make(es, n_old, true);
		struct entry_index scan = {.es = es, .n = n_old, .measured_only = true};

		for (size_t k = 0; k < n; k++)
			CHECK(entry_find(&idx, &now[k]) == entry_find(&scan, &now[k]),
			      "round %d, %zu: the index finds what the scan (no memory) finds",
			      round, k);
		free(idx.by);
		want = calloc(n + 1, sizeof(*want));
		memcpy(want, p->entries, n * sizeof(*want));
		ref_merge(want, n, es, n_old);
		merge_round(p, es, n_old);
		for (size_t k = 0; k < n; k++) {
			CHECK(same_entry(&p->entries[k], &want[k]), "round %d, %zu", round, k);
			merged += want[k].r.measured;
		}
		free(want);
		free(es);
		probe_stop(p);
	}
	CHECK(merged > 100, "the rounds cover it: %zu results merged", merged);
}

/* run_round merges a batch of zones at a time: the same as the whole-list merge of those. */
static void test_merge_one_zone(void)
{
	struct probe_target old[] = {target("pve2", "a", 1390), target("pve3", "a", 1390),
				     target("pve2", "b", 1390), target("pve3", "b", 1390),
				     target("pve4", "b", 1390), target("pve2", "c", 1390)};
	struct probe_target now[] = {target("pve2", "c", 1390), target("pve4", "b", 1400),
				     target("pve2", "b", 1390), target("pve2", "a", 1390),
				     target("pve5", "b", 1390)};
	struct probe *p = probe_new();
	struct entry es[3], want[5];
	size_t at, n;

	probe_configure(p, "c", "pve1", old, 6);
	at = 2;
	n = zone_len(p->entries + at, p->n - at);
	CHECK_INT(n, 3, "zone b's entries follow each other");
	memcpy(es, p->entries + at, sizeof(es));
	measured(&es[0], 30);
	measured(&es[2], 32);
	probe_configure(p, "c", "pve1", now, 5); /* while zone b was measured */
	for (size_t k = 0; k < 5; k++)
		p->entries[k].reported = REP_OK;
	memcpy(want, p->entries, sizeof(want));
	ref_merge(want, 5, es, 3);
	merge_round(p, es, 3);
	for (size_t k = 0; k < 5; k++)
		CHECK(same_entry(&p->entries[k], &want[k]), "entry %zu as the whole-list merge", k);
	CHECK(!p->entries[1].r.measured, "pve4 b moved to MTU 1400: the 1390 result is not its");
	CHECK_INT(p->entries[1].r.target.mtu, 1400, "and kept its new MTU");
	CHECK_INT(p->entries[2].r.largest, 30, "pve2 b");
	CHECK(!p->entries[0].r.measured && !p->entries[3].r.measured && !p->entries[4].r.measured,
	      "other zones and new targets untouched");
	CHECK_INT(zone_len(p->entries, 0), 0, "no entries, no zone");
	probe_stop(p);
}

/* n targets of zone name, peers pve2.. */
static void zone_targets(struct probe_target *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		char peer[16];

		snprintf(peer, sizeof(peer), "pve%zu", i + 2);
		t[i] = target(peer, name, 1390);
	}
}

/* A batch is whole zones: at most BATCH_ZONES, at most BATCH_ENTRIES unless one zone is more. */
static void test_batch_len(void)
{
	struct probe_target *t = calloc(30 + 1200, sizeof(*t));
	struct probe *p = probe_new();
	size_t n = 0;

	for (int z = 0; z < 10; z++) { /* ten zones of 3 */
		char name[16];

		snprintf(name, sizeof(name), "s%d", z);
		zone_targets(t + n, 3, name);
		n += 3;
	}
	zone_targets(t + n, 300, "m1"); /* then 300, 300 and 600 */
	zone_targets(t + n + 300, 300, "m2");
	zone_targets(t + n + 600, 600, "m3");
	probe_configure(p, "c", "pve1", t, n + 1200);
	CHECK_INT(batch_len(p->entries, p->n), 8 * 3, "eight zones of three");
	CHECK_INT(batch_len(p->entries + 24, p->n - 24), 2 * 3 + 300,
		  "the last two small zones and the first of 300");
	CHECK_INT(batch_len(p->entries + 330, p->n - 330), 300, "300 and 300 are over 512");
	CHECK_INT(batch_len(p->entries + 630, p->n - 630), 600, "one zone of 600 is a batch");
	CHECK_INT(batch_len(p->entries, 0), 0, "nothing left, no batch");
	free(t);
	probe_stop(p);
}

/*
 * A zone switched while a round measured it (plain at 1450 to secure at
 * 1390, under the max policy): the round's black hole at 1450 is the old
 * path's, and the entry of the new one stays unmeasured, not "1390-byte
 * frames are lost, 1390 bytes pass". The same path merges as before.
 */
static void test_merge_after_switch(void)
{
	struct probe_target plain = {
	    .peer = "pve2", .zone = "amber", .transport = "plain", .mtu = 1450};
	struct probe_target secure = plain, other = plain;
	struct probe *p = probe_new();
	struct entry es[2];

	secure.transport = "secure";
	secure.mtu = 1390;
	snprintf(other.zone, sizeof(other.zone), "%s", "blue");
	struct probe_target before[] = {plain, other}, after[] = {secure, other};

	probe_configure(p, "c", "pve1", before, 2);
	memcpy(es, p->entries, sizeof(es));
	for (int i = 0; i < 2; i++) {
		es[i].r.measured = es[i].r.reachable = es[i].r.black_hole = true;
		es[i].r.largest = 1390;
	}
	probe_configure(p, "c", "pve1", after, 2); /* while the round ran */
	p->entries[1].reported = REP_BLACK_HOLE;   /* already logged: the merge stays quiet */
	p->entries[1].reported_size = 1390;
	merge_round(p, es, 2);
	CHECK(!p->entries[0].r.measured && !p->entries[0].r.black_hole,
	      "amber, now secure at 1390: the plain path's black hole is not its result");
	CHECK_INT(p->entries[0].reported, REP_NONE, "and nothing was logged for it");
	CHECK(p->entries[1].r.measured && p->entries[1].r.black_hole &&
		  p->entries[1].r.largest == 1390,
	      "blue, the same path: its result merged");
	probe_configure(p, "c", "pve1", NULL, 0);
	probe_stop(p);
}

int main(void)
{
	test_batch_len();
	test_carry_over();
	test_transport_switch();
	test_duplicates();
	test_random();
	test_merge_random();
	test_merge_one_zone();
	test_merge_after_switch();
	return unit_summary("test_probe");
}
