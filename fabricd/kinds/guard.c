// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guard.c - the nftables guard: an observation of the kernel's `inet fabricd`
 * table (built by engine/guard_nl.c from its netlink dumps), whether it must
 * be replaced or only its set elements changed, its counters. Replacing it
 * is engine/guard_io.c's (libnftables) and engine/guard_delta.c's.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "kinds/guard.h"
#include "kinds/guard_priv.h"
#include "kinds/kind.h"
#include "engine/observe.h"
#include "base/log.h"

struct firewall_obs {
	char comment[256];
	char *summary; /* firewall_obs_finish(): the lines, joined */
	struct strlist lines;
	struct firewall_elems sets[FW_N_SETS];
	bool has_set[FW_N_SETS];
	uint32_t sizes[FW_N_SETS]; /* declared (0: none) */
	struct firewall_counter counters[FW_N_COUNTERS];
	bool has_counter[FW_N_COUNTERS];
};

/* --- building an observation ------------------------------------------------------- */

struct firewall_obs *firewall_obs_new(void)
{
	return calloc(1, sizeof(struct firewall_obs));
}

void firewall_obs_set_comment(struct firewall_obs *fw, const char *comment)
{
	snprintf(fw->comment, sizeof(fw->comment), "%s", comment);
}

int firewall_obs_add_counter(struct firewall_obs *fw, const char *name, uint64_t packets,
			     uint64_t bytes)
{
	char line[160];

	for (int i = 0; i < FW_N_COUNTERS; i++) {
		if (strcmp(name, firewall_counter_names[i]))
			continue;
		fw->counters[i] = (struct firewall_counter){packets, bytes};
		fw->has_counter[i] = true;
	}
	snprintf(line, sizeof(line), "counter %s", name);
	return strlist_add(&fw->lines, line);
}

int firewall_obs_add_set(struct firewall_obs *fw, const char *name, uint32_t size)
{
	enum firewall_set_id id = firewall_set_by_name(name);
	char line[160];

	if (id < FW_N_SETS) {
		fw->has_set[id] = true;
		fw->sizes[id] = size;
	}
	snprintf(line, sizeof(line), "set %s", name);
	return strlist_add(&fw->lines, line);
}

bool firewall_obs_has_set(const struct firewall_obs *fw, enum firewall_set_id id)
{
	return id < FW_N_SETS && fw->has_set[id];
}

void firewall_obs_clear_set(struct firewall_obs *fw, enum firewall_set_id id)
{
	if (id < FW_N_SETS)
		elems_free(&fw->sets[id]);
}

/* The key lengths fabricd's sets have (IPv4 or IPv6 underlay for the members). */
static bool key_len_fits(enum firewall_set_id id, size_t len)
{
	switch (id) {
	case FW_SET_PLAIN_MEMBERS:
		return len == 8 || len == 20;
	case FW_SET_SECURE_VNIS:
	case FW_SET_CARRIED_VNIS:
	case FW_SET_NODE_VNIS:
		return len == 3;
	case FW_SET_CARRIED_MEMBERS:
	case FW_SET_FABRIC_MEMBERS:
		return len == 8 || len == 20;
	case FW_SET_WG_IP:
		return len == 4;
	case FW_SET_WG_IP6:
		return len == 16;
	default:
		return false;
	}
}

int firewall_obs_add_elem(struct firewall_obs *fw, const char *set, const uint8_t *key, size_t len)
{
	enum firewall_set_id id = firewall_set_by_name(set);
	struct firewall_key k = {0};

	if (id >= FW_N_SETS)
		return strlist_add(&fw->lines, "other element of a foreign set");
	/* a key of another length is another set type: the whole table is replaced */
	if (!key_len_fits(id, len))
		return strlist_add(&fw->lines, "other element fabricd never makes");
	k.len = (uint8_t)len;
	if (len)
		memcpy(k.b, key, len);
	return elems_add(&fw->sets[id], &k);
}

int firewall_obs_add_chain(struct firewall_obs *fw, const char *name, const char *type,
			   const char *hook, long long prio, const char *policy,
			   const char *verdicts)
{
	struct sbuf b = {0};
	char *line;
	int ret;

	sbuf_printf(&b, "chain %s:", name);
	if (hook)
		sbuf_printf(&b, " %s %s %lld %s", type ? type : "?", hook, prio,
			    policy ? policy : "?");
	sbuf_printf(&b, ", rules: %s", verdicts && *verdicts ? verdicts : "none");
	line = sbuf_take(&b);
	ret = line ? strlist_add(&fw->lines, line) : -ENOMEM;
	free(line);
	return ret;
}

int firewall_obs_add_other(struct firewall_obs *fw, const char *what)
{
	char line[160];

	snprintf(line, sizeof(line), "other %s", what);
	return strlist_add(&fw->lines, line);
}

int firewall_obs_finish(struct firewall_obs *fw)
{
	for (int i = 0; i < FW_N_SETS; i++)
		elems_sort(&fw->sets[i]);
	free(fw->summary);
	/* the lines stay (sorted): more may follow, and another finish */
	fw->summary = summary_join(&fw->lines);
	return fw->summary ? 0 : -ENOMEM;
}

/* Whether the kernel's set id holds VNI vni (sorted by firewall_obs_finish()). */
static bool obs_has_vni(const struct firewall_obs *fw, enum firewall_set_id id, uint32_t vni)
{
	const struct firewall_elems *set = fw ? &fw->sets[id] : NULL;
	struct firewall_key k;
	size_t lo = 0, hi = set ? set->n : 0;

	key_make(&k, NULL, vni);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = elems_cmp(set, mid, &k);

		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

bool firewall_obs_carries(const struct firewall_obs *fw, uint32_t vni)
{
	return obs_has_vni(fw, FW_SET_CARRIED_VNIS, vni);
}

bool firewall_obs_seals(const struct firewall_obs *fw, uint32_t vni)
{
	return obs_has_vni(fw, FW_SET_SECURE_VNIS, vni);
}

void firewall_obs_free(struct firewall_obs *fw)
{
	if (!fw)
		return;
	free(fw->summary);
	strlist_free(&fw->lines);
	for (int i = 0; i < FW_N_SETS; i++)
		elems_free(&fw->sets[i]);
	free(fw);
}

bool firewall_obs_counter(const struct firewall_obs *fw, enum firewall_counter_id id,
			  struct firewall_counter *out)
{
	if (!fw || id >= FW_N_COUNTERS || !fw->has_counter[id]) {
		memset(out, 0, sizeof(*out));
		return false;
	}
	*out = fw->counters[id];
	return true;
}

/* --- planning ------------------------------------------------------------------------ */

/* "fabricd:<cluster> <hash>": owned by owner when the part before the hash is owner. */
static bool owned_by(const struct firewall_obs *fw, const char *owner)
{
	const char *sp = strrchr(fw->comment, ' ');
	size_t n = strlen(owner);

	return sp && (size_t)(sp - fw->comment) == n && !strncmp(fw->comment, owner, n);
}

bool firewall_obs_owned(const struct firewall_obs *fw, const char *owner)
{
	return fw && owned_by(fw, owner);
}

/*
 * A table fabricd made under another cluster name ("fabricd:OTHER HASH"): says
 * so (an error, or a warning), with the command that removes it. False for
 * any other comment.
 */
static bool other_cluster_said(const struct firewall_obs *fw, const char *owner, bool error)
{
	char name[FABRICD_NAME_MAX + 1], text[512];

	if (!owner_mark_cluster(fw->comment, name, sizeof(name)))
		return false;
	snprintf(text, sizeof(text),
		 "%s: made by fabricd for cluster \"%s\", not \"%s\"; if that was this "
		 "cluster's name before, `fabricd down --cluster %s` removes it",
		 OBJECT, name, owner + strlen(OWNER_PREFIX), name);
	if (error)
		log_error("%s", text);
	else
		log_warn("%s", text);
	return true;
}

bool firewall_conflict(const struct firewall_obs *fw, const char *owner, struct diag *diag)
{
	char name[FABRICD_NAME_MAX + 1];

	if (!fw || owned_by(fw, owner))
		return false;
	if (owner_mark_cluster(fw->comment, name, sizeof(name)))
		diag_add(diag, OBJECT,
			 "made by fabricd for cluster \"%s\", not \"%s\"; if that was this "
			 "cluster's name before, `fabricd down --cluster %s` removes it",
			 name, owner + strlen(OWNER_PREFIX), name);
	else
		diag_add(diag, OBJECT,
			 "exists but is not owned by %s (comment \"%s\"); fabricd never replaces "
			 "a table it did not make: move what it holds to a table of another name "
			 "and remove it (nft delete table %s)",
			 owner, fw->comment, TABLE_NAME);
	return true;
}

/* What the kernel holds, or will once the ops before have run. */
struct view {
	const char *comment, *summary;
	const struct firewall_elems *sets; /* FW_N_SETS */
	const uint32_t *sizes;		   /* FW_N_SETS: declared (0: none) */
};

static struct view view_of_obs(const struct firewall_obs *fw)
{
	return (struct view){fw->comment, fw->summary ? fw->summary : "", fw->sets, fw->sizes};
}

static struct view view_of_rs(const struct firewall_ruleset *rs)
{
	return (struct view){rs->comment, rs->summary, rs->sets, rs->sizes};
}

/* Whether text has the line line[0..n) as a whole line. */
static bool has_line(const char *text, const char *line, size_t n)
{
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");

		if (len == n && !strncmp(p, line, n))
			return true;
		p += len + (p[len] == '\n');
	}
	return false;
}

/* The first line of text (n bytes: *len) that other lacks, or NULL. */
static const char *first_missing(const char *text, const char *other, size_t *len)
{
	for (const char *line = text; *line;) {
		size_t n = strcspn(line, "\n");

		if (!has_line(other, line, n)) {
			*len = n;
			return line;
		}
		line += n + (line[n] == '\n');
	}
	return NULL;
}

/* The line of text that starts with key[0..n), or NULL. */
static const char *line_starting(const char *text, const char *key, size_t n, size_t *len)
{
	for (const char *line = text; *line;) {
		*len = strcspn(line, "\n");
		if (*len >= n && !strncmp(line, key, n))
			return line;
		line += *len + (line[*len] == '\n');
	}
	return NULL;
}

/* A summary line for people: "chain wireguard_in:, rules: x" -> "chain wireguard_in, rules: x". */
static void tidy(const char *line, size_t n, char *out, size_t len)
{
	const char *colon = memchr(line, ':', n);
	size_t at = colon && colon + 1 < line + n && colon[1] == ',' ? (size_t)(colon - line) : n;

	snprintf(out, len, "%.*s%.*s", (int)(at < 200 ? at : 200), line,
		 at < n ? (int)(n - at - 1 > 160 ? 160 : n - at - 1) : 0, at < n ? colon + 1 : "");
}

/* The name of a summary line's object: what comes before its ':' ("chain output"). */
static size_t object_key(const char *line, size_t n)
{
	const char *colon = memchr(line, ':', n);

	return colon ? (size_t)(colon - line) : n;
}

/* Whether list ("a, b") has key[0..n) as an item. */
static bool listed(const char *list, const char *key, size_t n)
{
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && !strncmp(p, key, n))
			return true;
		p += len + (p[len] == ',');
		p += *p == ' ';
	}
	return false;
}

/*
 * Adds to out ("chain a, chain b") the objects of text's lines that other
 * lacks, but the one already described (skip[0..skip_n)).
 */
static void other_objects(const char *text, const char *other, const char *skip, size_t skip_n,
			  char *out, size_t len)
{
	for (const char *line = text; *line;) {
		size_t n = strcspn(line, "\n"), k = object_key(line, n), used = strlen(out);

		if (!has_line(other, line, n) && !(k == skip_n && !strncmp(line, skip, k)) &&
		    !listed(out, line, k) && used + k + 3 < len)
			snprintf(out + used, len - used, "%s%.*s", used ? ", " : "", (int)k, line);
		line += n + (line[n] == '\n');
	}
}

/*
 * After the first difference the detail describes: the other objects that
 * differ, named (a second chain changed by hand is not hidden behind the first).
 */
static void describe_others(const char *want, const char *have, const char *first, size_t n,
			    struct op *op)
{
	char others[256] = "";
	size_t k = object_key(first, n);

	other_objects(want, have, first, k, others, sizeof(others));
	other_objects(have, want, first, k, others, sizeof(others));
	if (others[0])
		op_detail(op, "and %s differ%s too", others, strchr(others, ',') ? "" : "s");
}

/*
 * What the kernel's copy lacks or has extra, for the plan's detail: an
 * object (a chain, by its name before ':') in both with another shape says
 * what it has and what is wanted.
 */
static void describe_drift(const char *want, const char *have, struct op *op)
{
	char a[256], b[256];
	size_t n, m;
	const char *line = first_missing(want, have, &n), *colon, *found = NULL;

	if (!line) {
		line = first_missing(have, want, &n);
		if (!line) {
			op_detail(op, "kernel copy has objects the definition does not make");
			return;
		}
		tidy(line, n, a, sizeof(a));
		op_detail(op, "kernel copy has objects the definition does not make: %s", a);
		describe_others(want, have, line, n, op);
		return;
	}
	tidy(line, n, a, sizeof(a));
	colon = memchr(line, ':', n);
	if (colon)
		found = line_starting(have, line, (size_t)(colon - line) + 1, &m);
	if (!found)
		op_detail(op, "kernel copy lacks %s", a);
	else
		op_detail(op, "kernel copy differs: %s, where the definition makes %s",
			  (tidy(found, m, b, sizeof(b)), b), a);
	describe_others(want, have, line, n, op);
}

static bool sets_equal(const struct firewall_elems *a, const struct firewall_elems *b)
{
	for (int i = 0; i < FW_N_SETS; i++) {
		if (!elems_equal(&a[i], &b[i]))
			return false;
	}
	return true;
}

/* Only set elements differ: the rest of the table (skeleton, objects, rule counts) is rs's. */
static bool only_elements_differ(const struct view *have, const struct firewall_ruleset *rs)
{
	return !strcmp(have->comment, rs->comment) && !strcmp(have->summary, rs->summary);
}

/*
 * Appends the elements of from that minus lacks (both sorted), ", "-separated,
 * to b (NULL: only counts them); how many.
 */
static size_t delta_elems(struct sbuf *b, const struct firewall_elems *from,
			  const struct firewall_elems *minus)
{
	size_t k = 0, n = 0;

	for (size_t i = 0; i < from->n; i++) {
		char text[IP_ADDR_STRLEN + 48];
		struct firewall_key e;
		int c = 1;

		elems_get(from, i, &e);
		while (k < minus->n && (c = elems_cmp(minus, k, &e)) < 0)
			k++;
		if (k < minus->n && c == 0)
			continue;
		if (b) {
			key_text(&e, text, sizeof(text));
			sbuf_printf(b, "%s%s", n ? ", " : "", text);
		}
		n++;
	}
	return n;
}

uint32_t firewall_set_size_keep(const struct firewall_elems *want,
				const struct firewall_elems *have, uint32_t have_size)
{
	if (have_size && want->n <= (size_t)have_size && want->n * 8 >= have_size &&
	    have->n + delta_elems(NULL, want, have) <= have_size)
		return have_size;
	return firewall_set_size_fresh(want->n);
}

/*
 * The set-element commands turning have's sets into want's, one transaction.
 * An element that goes is added first: "delete element" of one the kernel
 * lacks (someone removed it since the view was read) fails the whole
 * transaction, "add" of one it has changes nothing, so the pair always leaves
 * it gone. NULL after ENOMEM.
 */
static char *delta_text(const struct firewall_elems *want, const struct firewall_elems *have,
			size_t *added, size_t *removed, struct sbuf *named)
{
	struct sbuf b = {0};
	bool failed = false;

	*added = *removed = 0;
	sbuf_printf(&b, FIREWALL_DELTA_MARK);
	for (int i = 0; i < FW_N_SETS && !failed; i++) {
		const char *set = firewall_set_names[i];
		struct sbuf list = {0};
		size_t n_in = delta_elems(&list, &want[i], &have[i]);
		char *in = sbuf_take(&list);
		size_t n_out = delta_elems(&list, &have[i], &want[i]);
		char *out = sbuf_take(&list);

		failed = !in || !out;
		/* for people: which ones, when there are few (drift by hand, say) */
		if (!failed && n_in)
			sbuf_printf(named, "%s%s to %s", named->len ? "; " : "", in, set);
		if (!failed && n_out)
			sbuf_printf(named, "%s%s from %s", named->len ? "; " : "", out, set);
		if (!failed && n_in)
			sbuf_printf(&b, "add element " TABLE_NAME " %s { %s }\n", set, in);
		if (!failed && n_out)
			sbuf_printf(&b,
				    "add element " TABLE_NAME " %s { %s }\n"
				    "delete element " TABLE_NAME " %s { %s }\n",
				    set, out, set, out);
		*added += n_in;
		*removed += n_out;
		free(in);
		free(out);
	}
	if (failed) {
		free(sbuf_take(&b));
		return NULL;
	}
	return sbuf_take(&b);
}

/* Plans the set elements' change from have to rs (kept by the caller). 0 or -ENOMEM. */
static int plan_delta(const struct view *have, enum op_phase phase,
		      const struct firewall_ruleset *rs, struct plan *p)
{
	struct op *op = plan_add(p, KIND_GUARD, OP_FIREWALL_SET, phase, VERB_CHANGE, NULL);
	struct sbuf named = {0};
	size_t added, removed;
	char *names;

	if (!op)
		return -ENOMEM;
	op->text = delta_text(rs->sets, have->sets, &added, &removed, &named);
	names = sbuf_take(&named);
	if (!op->text || !names) {
		free(names);
		return -ENOMEM;
	}
	if (phase == PHASE_SEAL)
		op_detail(op,
			  "sealed: switched vnets' plain VXLAN no longer leaves this node (%zu "
			  "set elements added, %zu removed)",
			  added, removed);
	else
		op_detail(op,
			  "set elements: %zu added, %zu removed, in one transaction (rules and "
			  "counters kept)",
			  added, removed);
	if (added + removed <= 4)
		op_detail(op, "%s", names);
	free(names);
	return 0;
}

static bool any_plain_sending(const struct node_state *want)
{
	for (size_t i = 0; i < want->n_vnets; i++) {
		if (want->vnets[i].transport == TRANSPORT_SECURE && want->vnets[i].plain_sending)
			return true;
	}
	return false;
}

/* The first set whose declared size have and rs differ in, or -1. */
static int size_changed(const struct view *have, const struct firewall_ruleset *rs)
{
	for (int i = 0; i < FW_N_SETS; i++) {
		if (have->sizes[i] != rs->sizes[i])
			return i;
	}
	return -1;
}

/* Plans loading the whole of want's table (stage sealed) in phase; the detail says why. */
static int plan_table(const struct node_state *want, const struct view *have, bool sealed,
		      const struct firewall_counter *carry, const uint32_t *sizes,
		      enum op_phase phase, struct plan *p)
{
	struct op *op =
	    plan_add(p, KIND_GUARD, OP_FIREWALL_SET, phase, have ? VERB_CHANGE : VERB_CREATE, NULL);
	struct firewall_ruleset rs;
	size_t n_secure = 0;
	int ret, resized;

	if (!op)
		return -ENOMEM;
	ret = firewall_render_sized(want, carry, sealed, sizes, true, &rs);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < want->n_vnets; i++)
		n_secure += want->vnets[i].transport == TRANSPORT_SECURE;
	resized = have ? size_changed(have, &rs) : -1;
	if (phase == PHASE_SEAL)
		op_detail(op, "sealed: switched vnets' plain VXLAN no longer leaves this node");
	else if (!have)
		op_detail(op, "guard for %zu plain and %zu secure vnets, WireGuard port %u",
			  want->n_vnets - n_secure, n_secure, want->fabric.listen_port);
	else if (resized >= 0)
		op_detail(op,
			  "set %s declared for %u elements, %zu wanted (now %u): replaced in one "
			  "transaction, counters kept",
			  firewall_set_names[resized], have->sizes[resized], rs.sets[resized].n,
			  rs.sizes[resized]);
	else if (strcmp(have->comment, rs.comment))
		op_detail(op, "rules changed: replaced in one transaction, counters kept");
	else if (only_elements_differ(have, &rs))
		op_detail(op, "set elements of a vnet switching transport: the table replaced in "
			      "one transaction, counters kept");
	else
		describe_drift(rs.summary, have->summary, op);
	/* gone, or drifted from the same rendering (its hash unchanged): a repair */
	op->guard_repair =
	    phase == PHASE_GUARD &&
	    (!have || (!strcmp(have->comment, rs.comment) && !only_elements_differ(have, &rs)));
	op->text = rs.text;
	rs.text = NULL;
	firewall_ruleset_free(&rs);
	return 0;
}

/* A vnet in the middle of a transport switch (its plain device still sends or receives). */
static bool any_vnet_switching(const struct node_state *want)
{
	for (size_t i = 0; i < want->n_vnets; i++) {
		const struct desired_vnet *v = &want->vnets[i];

		if (v->plain_sending || v->plain_receiving ||
		    (v->carried && v->transport == TRANSPORT_PLAIN))
			return true;
	}
	return false;
}

/*
 * Whatever turns have (NULL: no table) into stage rs: nothing, its elements, or all of it.
 * Elements go by delta unless a vnet is switching: on Debian's 6.1 kernel
 * (QEMU tier, kernel WireGuard) deltas during a transport switch lost 5-15%
 * of pings for 1-2 s, whole tables 0-1.5% (the emulated guest is near its
 * limit); kernel 6.18 lost none either way. Otherwise a delta is what to
 * send: a whole table at scale is tens of thousands of elements, each one a
 * notification to every listener (the daemon's own socket overflows).
 */
static int plan_stage(const struct node_state *want, const struct view *have, bool sealed,
		      const struct firewall_counter *carry, const struct firewall_ruleset *rs,
		      enum op_phase phase, struct plan *p)
{
	if (have && only_elements_differ(have, rs) && sets_equal(have->sets, rs->sets))
		return 0;
	if (have && only_elements_differ(have, rs) && !any_vnet_switching(want))
		return plan_delta(have, phase, rs, p);
	return plan_table(want, have, sealed, carry, rs->sizes, phase, p);
}

/*
 * rs, rendered with fresh sizes, declared instead with the sizes have's sets
 * keep (firewall_set_size_keep; the text is not made): rendered again when
 * they differ. 0 or -ENOMEM.
 */
static int size_like(const struct node_state *want, const struct view *have, bool sealed,
		     struct firewall_ruleset *rs)
{
	uint32_t sizes[FW_N_SETS];
	bool same = true;

	for (int i = 0; i < FW_N_SETS; i++) {
		sizes[i] = firewall_set_size_keep(&rs->sets[i], &have->sets[i], have->sizes[i]);
		same = same && sizes[i] == rs->sizes[i];
	}
	if (same)
		return 0;
	firewall_ruleset_free(rs);
	return firewall_render_sized(want, NULL, sealed, sizes, false, rs);
}

int firewall_plan(const struct node_state *want, const struct firewall_obs *have, struct plan *p)
{
	struct firewall_counter carry[FW_N_COUNTERS];
	struct firewall_ruleset early, sealed;
	struct view kernel, before_seal;
	int ret;

	/* another's table: a conflict (firewall_conflict), which stops planning before this */
	if (have && !owned_by(have, want->owner))
		return -EEXIST;
	if (have)
		kernel = view_of_obs(have);
	for (int i = 0; i < FW_N_COUNTERS; i++)
		firewall_obs_counter(have, (enum firewall_counter_id)i, &carry[i]);
	ret = firewall_render_summary(want, true, &sealed);
	if (ret == 0 && have)
		ret = size_like(want, &kernel, true, &sealed);
	if (ret < 0)
		return ret;
	/*
	 * Before the links change the table may only open what this pass needs
	 * (a vnet switching to secure still sends plain until its plain device
	 * is muted); the sealed table follows once it is (PHASE_SEAL). Without
	 * such a vnet the two are the same table.
	 */
	if (!any_plain_sending(want)) {
		ret = plan_stage(want, have ? &kernel : NULL, true, carry, &sealed, PHASE_GUARD, p);
		firewall_ruleset_free(&sealed);
		return ret;
	}
	ret = firewall_render_summary(want, false, &early);
	if (ret == 0 && have)
		ret = size_like(want, &kernel, false, &early);
	if (ret == 0)
		ret = plan_stage(want, have ? &kernel : NULL, false, carry, &early, PHASE_GUARD, p);
	/* the seal starts from the early table, whatever the kernel held before */
	before_seal = view_of_rs(&early);
	if (ret == 0)
		ret = size_like(want, &before_seal, true, &sealed);
	if (ret == 0)
		ret = plan_stage(want, &before_seal, true, carry, &sealed, PHASE_SEAL, p);
	firewall_ruleset_free(&early);
	firewall_ruleset_free(&sealed);
	return ret;
}

int firewall_plan_down(const struct firewall_obs *have, struct plan *p)
{
	struct op *op;

	if (!have)
		return 0;
	/* the plan's owner is this cluster's mark, as for links */
	if (!owned_by(have, p->owner)) {
		if (!other_cluster_said(have, p->owner, false))
			log_warn("%s: not owned by %s (comment \"%s\"): left alone", OBJECT,
				 p->owner, have->comment);
		return 0;
	}
	op = plan_add(p, KIND_GUARD, OP_FIREWALL_DELETE, PHASE_UNGUARD, VERB_DELETE, NULL);
	if (!op)
		return -ENOMEM;
	op_detail(op, "the guard goes last");
	return 0;
}

/*
 * The guard is one kind like the others, but its kernel copy is read over
 * nftables netlink (engine/guard_nl.c), its plan renders a whole table or a
 * delta of set elements, and its op goes to nftables: in: want, have->firewall.
 */
static int guard_plan(const struct kind_input *in, struct plan *p)
{
	return firewall_plan(in->want, in->have->firewall, p);
}

/* Its op is one a pass: the detail is in op.note. */
static void guard_describe(const struct op *op, char *buf, size_t len)
{
	(void)op;
	if (len)
		buf[0] = '\0';
}

const struct kind guard_kind = {.name = "guard",
				.noun = OBJECT,
				.parse = NULL,
				.plan = guard_plan,
				.encode = NULL,
				.describe = guard_describe};

/* --- status ------------------------------------------------------------------------- */

json_t *firewall_status_json(const struct firewall_obs *fw, const char *owner)
{
	json_t *counters = json_object();

	for (int i = 0; fw && i < FW_N_COUNTERS; i++) {
		struct firewall_counter c;

		if (!firewall_obs_counter(fw, (enum firewall_counter_id)i, &c))
			continue;
		json_object_set_new(counters, firewall_counter_names[i],
				    json_pack("{s:I, s:I}", "packets", (json_int_t)c.packets,
					      "bytes", (json_int_t)c.bytes));
	}
	return json_pack("{s:s, s:b, s:b, s:o}", "table", TABLE_NAME, "present", fw != NULL,
			 "owned", fw && owned_by(fw, owner), "counters", counters);
}
