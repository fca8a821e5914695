// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guard.c - the nftables guard: parse libnftables' listing of the `inet
 * fabricd` table, decide whether it must be replaced, report its counters.
 * Reading and replacing it (libnftables) is engine/guard_io.c's.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/guard.h"
#include "kinds/guard_priv.h"
#include "kinds/kind.h"
#include "engine/observe.h"
#include "base/log.h"

struct firewall_obs {
	char comment[256];
	char *summary;
	struct firewall_counter counters[FW_N_COUNTERS];
	bool has_counter[FW_N_COUNTERS];
};

/* --- reading the kernel's copy ---------------------------------------------------- */

/* One set element as the renderer writes it: "addr", "vni" or "addr . vni". */
static void elem_text(json_t *e, struct sbuf *b)
{
	struct ip_addr a;
	char ip[IP_ADDR_STRLEN];
	json_t *part;
	size_t i;

	if (json_is_string(e)) {
		if (ip_addr_parse(json_string_value(e), &a) == 0)
			sbuf_printf(b, "%s", ip_addr_str(&a, ip, sizeof(ip)));
		else
			sbuf_printf(b, "%s", json_string_value(e));
	} else if (json_is_integer(e)) {
		sbuf_printf(b, "%lld", (long long)json_integer_value(e));
	} else if (json_is_array(json_object_get(e, "concat"))) {
		json_array_foreach(json_object_get(e, "concat"), i, part)
		{
			if (i)
				sbuf_printf(b, " . ");
			elem_text(part, b);
		}
	} else {
		/* anything else (ranges, prefixes, stateful elements) is not ours */
		char *raw = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS);

		sbuf_printf(b, "%s", raw ? raw : "?");
		free(raw);
	}
}

static int summarize_set(json_t *set, struct strlist *lines)
{
	struct strlist elems = {0};
	json_t *e;
	size_t i;
	int ret = 0;

	json_array_foreach(json_object_get(set, "elem"), i, e)
	{
		struct sbuf b = {0};
		char *text;

		elem_text(e, &b);
		text = sbuf_take(&b);
		ret = text ? strlist_add(&elems, text) : -ENOMEM;
		free(text);
		if (ret)
			break;
	}
	if (!ret)
		ret = summary_set_line(lines, json_string_value(json_object_get(set, "name")),
				       &elems);
	strlist_free(&elems);
	return ret;
}

static size_t count_rules(json_t *items, const char *chain)
{
	size_t n = 0, i;
	json_t *item, *rule;

	json_array_foreach(items, i, item)
	{
		rule = json_object_get(item, "rule");
		if (rule && json_string_value(json_object_get(rule, "chain")) &&
		    !strcmp(json_string_value(json_object_get(rule, "chain")), chain))
			n++;
	}
	return n;
}

static int summarize_chain(json_t *chain, json_t *items, struct strlist *lines)
{
	const char *name = json_string_value(json_object_get(chain, "name"));
	const char *type = json_string_value(json_object_get(chain, "type"));
	const char *hook = json_string_value(json_object_get(chain, "hook"));
	const char *policy = json_string_value(json_object_get(chain, "policy"));
	json_t *prio = json_object_get(chain, "prio");
	struct sbuf b = {0};
	char *line;
	int ret;

	name = name ? name : "?";
	sbuf_printf(&b, "chain %s:", name);
	if (hook)
		sbuf_printf(&b, " %s %s %lld %s", type ? type : "?", hook,
			    (long long)json_integer_value(prio), policy ? policy : "?");
	sbuf_printf(&b, ", %zu rules", count_rules(items, name));
	line = sbuf_take(&b);
	ret = line ? strlist_add(lines, line) : -ENOMEM;
	free(line);
	return ret;
}

static void read_counter(struct firewall_obs *fw, json_t *c)
{
	const char *name = json_string_value(json_object_get(c, "name"));

	for (int i = 0; name && i < FW_N_COUNTERS; i++) {
		if (strcmp(name, firewall_counter_names[i]))
			continue;
		fw->counters[i].packets =
		    (uint64_t)json_integer_value(json_object_get(c, "packets"));
		fw->counters[i].bytes = (uint64_t)json_integer_value(json_object_get(c, "bytes"));
		fw->has_counter[i] = true;
	}
}

static int summarize(struct firewall_obs *fw, json_t *items)
{
	struct strlist lines = {0};
	json_t *item, *o;
	char line[160];
	size_t i;
	int ret = 0;

	json_array_foreach(items, i, item)
	{
		if ((o = json_object_get(item, "counter"))) {
			const char *name = json_string_value(json_object_get(o, "name"));

			read_counter(fw, o);
			snprintf(line, sizeof(line), "counter %s", name ? name : "?");
			ret = strlist_add(&lines, line);
		} else if ((o = json_object_get(item, "set")) ||
			   (o = json_object_get(item, "map"))) {
			ret = summarize_set(o, &lines);
		} else if ((o = json_object_get(item, "chain"))) {
			ret = summarize_chain(o, items, &lines);
		} else if (!json_object_get(item, "rule") && !json_object_get(item, "table") &&
			   !json_object_get(item, "metainfo")) {
			/* an object fabricd never makes: the table is not as rendered */
			const char *key = json_object_iter_key(json_object_iter(item));

			snprintf(line, sizeof(line), "other %s", key ? key : "?");
			ret = strlist_add(&lines, line);
		}
		if (ret)
			break;
	}
	if (!ret && !(fw->summary = summary_join(&lines)))
		ret = -ENOMEM;
	strlist_free(&lines);
	return ret;
}

/* The table comment from the text listing: the line "\tcomment "..."" at table level. */
static void read_comment(const char *text, char *out, size_t len)
{
	const char *p = text ? strstr(text, "\n\tcomment \"") : NULL;

	out[0] = '\0';
	if (!p)
		return;
	p += strlen("\n\tcomment \"");
	snprintf(out, len, "%.*s", (int)strcspn(p, "\"\n"), p);
}

int firewall_obs_parse(const char *json, const char *text, struct firewall_obs **out)
{
	struct firewall_obs *fw;
	json_error_t jerr;
	json_t *root, *items;
	int ret;

	*out = NULL;
	root = json_loads(json, 0, &jerr);
	items = json_object_get(root, "nftables");
	if (!json_is_array(items)) {
		json_decref(root);
		return -EINVAL;
	}
	fw = calloc(1, sizeof(*fw));
	if (!fw) {
		json_decref(root);
		return -ENOMEM;
	}
	read_comment(text, fw->comment, sizeof(fw->comment));
	ret = summarize(fw, items);
	json_decref(root);
	if (ret < 0) {
		firewall_obs_free(fw);
		return ret;
	}
	*out = fw;
	return 0;
}

void firewall_obs_free(struct firewall_obs *fw)
{
	if (!fw)
		return;
	free(fw->summary);
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

/* What the kernel's copy lacks or has extra, for the plan's detail. */
static void describe_drift(const char *want, const char *have, struct op *op)
{
	const char *line = want;

	while (*line) {
		size_t n = strcspn(line, "\n");
		const char *found = strstr(have, line);

		/* whole-line match only */
		while (found && ((found != have && found[-1] != '\n') || found[n] != '\n'))
			found = strstr(found + 1, line);
		if (!found) {
			op_detail(op, "kernel copy differs: %.*s", (int)(n > 120 ? 120 : n), line);
			return;
		}
		line += n + (line[n] == '\n');
	}
	op_detail(op, "kernel copy has objects the definition does not make");
}

/* True when the kernel's table is rs. */
static bool table_is(const struct firewall_obs *have, const struct firewall_ruleset *rs)
{
	return have && !strcmp(have->comment, rs->comment) && have->summary &&
	       !strcmp(have->summary, rs->summary);
}

static bool any_plain_sending(const struct node_state *want)
{
	for (size_t i = 0; i < want->n_vnets; i++) {
		if (want->vnets[i].transport == TRANSPORT_SECURE && want->vnets[i].plain_sending)
			return true;
	}
	return false;
}

/* Plans loading rs (taken) in phase; the detail says why. */
static int plan_table(const struct node_state *want, const struct firewall_obs *have,
		      enum op_phase phase, struct firewall_ruleset *rs, struct plan *p)
{
	struct op *op =
	    plan_add(p, KIND_GUARD, OP_FIREWALL_SET, phase, have ? VERB_CHANGE : VERB_CREATE, NULL);
	size_t n_secure = 0;

	if (!op) {
		firewall_ruleset_free(rs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < want->n_vnets; i++)
		n_secure += want->vnets[i].transport == TRANSPORT_SECURE;
	if (phase == PHASE_SEAL)
		op_detail(op, "sealed: switched vnets' plain VXLAN no longer leaves this node");
	else if (!have)
		op_detail(op, "guard for %zu plain and %zu secure vnets, WireGuard port %u",
			  want->n_vnets - n_secure, n_secure, want->fabric.listen_port);
	else if (strcmp(have->comment, rs->comment))
		op_detail(op, "rules changed: replaced in one transaction, counters kept");
	else
		describe_drift(rs->summary, have->summary ? have->summary : "", op);
	op->text = rs->text;
	rs->text = NULL;
	firewall_ruleset_free(rs);
	return 0;
}

int firewall_plan(const struct node_state *want, const struct firewall_obs *have, struct plan *p)
{
	struct firewall_counter carry[FW_N_COUNTERS];
	struct firewall_ruleset early, sealed;
	int ret;

	if (have && !owned_by(have, want->owner)) {
		log_error("%s: exists but is not owned by %s (comment \"%s\"); fabricd never "
			  "replaces a table it did not make: remove it (nft delete table %s) "
			  "or rename it",
			  OBJECT, want->owner, have->comment, TABLE_NAME);
		return -EEXIST;
	}
	for (int i = 0; i < FW_N_COUNTERS; i++)
		firewall_obs_counter(have, (enum firewall_counter_id)i, &carry[i]);
	ret = firewall_render_stage(want, carry, true, &sealed);
	if (ret < 0)
		return ret;
	/*
	 * Before the links change the table may only open what this pass needs
	 * (a vnet switching to secure still sends plain until its plain device
	 * is muted); the sealed table follows once it is (PHASE_SEAL). Without
	 * such a vnet the two are the same table.
	 */
	if (!any_plain_sending(want)) {
		if (table_is(have, &sealed)) {
			firewall_ruleset_free(&sealed);
			return 0;
		}
		return plan_table(want, have, PHASE_GUARD, &sealed, p);
	}
	ret = firewall_render_stage(want, carry, false, &early);
	if (ret < 0) {
		firewall_ruleset_free(&sealed);
		return ret;
	}
	ret = table_is(have, &early) ? (firewall_ruleset_free(&early), 0)
				     : plan_table(want, have, PHASE_GUARD, &early, p);
	if (ret < 0) {
		firewall_ruleset_free(&sealed);
		return ret;
	}
	return plan_table(want, have, PHASE_SEAL, &sealed, p);
}

int firewall_plan_down(const struct firewall_obs *have, struct plan *p)
{
	struct op *op;

	if (!have)
		return 0;
	/* the plan's owner is this cluster's mark, as for links */
	if (!owned_by(have, p->owner)) {
		log_warn("%s: not owned by %s (comment \"%s\"): left alone", OBJECT, p->owner,
			 have->comment);
		return 0;
	}
	op = plan_add(p, KIND_GUARD, OP_FIREWALL_DELETE, PHASE_UNGUARD, VERB_DELETE, NULL);
	if (!op)
		return -ENOMEM;
	op_detail(op, "the guard goes last");
	return 0;
}

/*
 * The guard is one kind like the others, but its parse is libnftables' JSON
 * (firewall_obs_parse, read by engine/guard_io.c), its plan renders a whole
 * table, and its op goes to libnftables, not rtnetlink: in: want, have->firewall.
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
