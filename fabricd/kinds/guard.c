// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guard.c - the nftables guard in the kernel: read the `inet fabricd`
 * table, decide whether it must be replaced, replace or remove it in one
 * transaction (libnftables, no nft process), report its counters.
 */
#include <errno.h>
#include <jansson.h>
#include <nftables/libnftables.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/guard.h"
#include "kinds/guard_priv.h"
#include "base/log.h"

#define TABLE_NAME FIREWALL_FAMILY " " FIREWALL_TABLE
#define OBJECT	   "nftables table " TABLE_NAME

struct firewall_obs {
	char comment[256];
	char *summary;
	struct firewall_counter counters[FW_N_COUNTERS];
	bool has_counter[FW_N_COUNTERS];
};

/* --- libnftables --------------------------------------------------------------------- */

/*
 * nft's error text on one line: its "Error: ..." messages, without the input
 * it echoes and the caret marks (for a buffer, libnftables may echo the
 * wrong line). Errors from the kernel start "Could not process rule: ".
 */
static void nft_error_text(struct nft_ctx *ctx, char *out, size_t len)
{
	const char *all = nft_ctx_get_error_buffer(ctx), *e = all;
	size_t used = 0;

	out[0] = '\0';
	while (e && *e) {
		size_t n = strcspn(e, "\n");

		for (size_t i = 0; i + 7 <= n; i++) {
			int w;

			if (strncmp(e + i, "Error: ", 7))
				continue;
			w = snprintf(out + used, len - used, "%s%.*s", used ? "; " : "",
				     (int)(n - i - 7), e + i + 7);
			if (w > 0)
				used = used + (size_t)w >= len ? len - 1 : used + (size_t)w;
			break;
		}
		e += n + (e[n] == '\n');
	}
	if (!out[0])
		snprintf(out, len, "%s", all && *all ? all : "failed without a message");
}

/* Runs cmd with output (and errors) into buffers. 0 or -1, err filled. */
static int nft_run(unsigned int flags, const char *cmd, char **output, char *err, size_t errlen)
{
	struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	int ret;

	err[0] = '\0';
	if (output)
		*output = NULL;
	if (!ctx) {
		snprintf(err, errlen, "libnftables could not start");
		return -1;
	}
	nft_ctx_output_set_flags(ctx, flags);
	if (nft_ctx_buffer_output(ctx) || nft_ctx_buffer_error(ctx)) {
		snprintf(err, errlen, "libnftables could not buffer its output");
		nft_ctx_free(ctx);
		return -1;
	}
	ret = nft_run_cmd_from_buffer(ctx, cmd);
	if (ret) {
		nft_error_text(ctx, err, errlen);
	} else if (output) {
		*output = strdup(nft_ctx_get_output_buffer(ctx));
		if (!*output) {
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			ret = -1;
		}
	}
	nft_ctx_free(ctx);
	return ret ? -1 : 0;
}

/* An errno for nft's words (libnftables reports text only). */
static int nft_errno(const char *err)
{
	if (strstr(err, "Operation not permitted"))
		return -EPERM;
	if (strstr(err, "not supported"))
		return -EOPNOTSUPP; /* no nf_tables, or not this feature of it */
	/* what nft checks itself, before the kernel: a ruleset fabricd should never render */
	if (!strstr(err, "Could not process rule") && !strstr(err, "cache initialization"))
		return -EINVAL;
	if (strstr(err, "No such file or directory"))
		return -ENOENT; /* the kernel lacks an expression (module) the rules use */
	if (strstr(err, "Cannot allocate memory"))
		return -ENOMEM;
	return -EIO;
}

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

int firewall_observe(struct firewall_obs **out)
{
	char err[512], *json = NULL, *text = NULL;
	int ret;

	*out = NULL;
	if (nft_run(NFT_CTX_OUTPUT_JSON, "list table " TABLE_NAME, &json, err, sizeof(err)) < 0) {
		if (strstr(err, "No such file or directory"))
			return 0; /* no table (yet) */
		/* no nf_tables in this kernel: no table either; apply says why */
		if (nft_errno(err) == -EOPNOTSUPP)
			return 0;
		/* a table we cannot read may be someone else's: never plan over it */
		log_error("%s: cannot be read: %s; nothing was changed", OBJECT, err);
		return nft_errno(err) == -EINVAL ? -EIO : nft_errno(err);
	}
	/* the JSON listing leaves the table comment out; the terse text has it */
	if (nft_run(NFT_CTX_OUTPUT_TERSE, "list table " TABLE_NAME, &text, err, sizeof(err)) < 0) {
		/* without its comment the table would look foreign: do not guess */
		log_error("%s: cannot be read as text: %s", OBJECT, err);
		free(json);
		return nft_errno(err);
	}
	ret = firewall_obs_parse(json, text, out);
	if (ret == -EINVAL)
		log_error(
		    "%s: libnftables listed it in a form fabricd does not understand; nothing "
		    "was changed",
		    OBJECT);
	free(json);
	free(text);
	return ret;
}

void firewall_obs_free(struct firewall_obs *fw)
{
	if (!fw)
		return;
	free(fw->summary);
	free(fw);
}

const char *firewall_obs_summary(const struct firewall_obs *fw)
{
	return fw && fw->summary ? fw->summary : "";
}

const char *firewall_obs_comment(const struct firewall_obs *fw)
{
	return fw ? fw->comment : "";
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

int firewall_plan(const struct node_state *want, const struct firewall_obs *have, struct plan *p)
{
	struct firewall_counter carry[FW_N_COUNTERS];
	struct firewall_ruleset rs;
	struct op *op;
	size_t n_secure = 0;
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
	ret = firewall_render(want, carry, &rs);
	if (ret < 0)
		return ret;
	if (have && !strcmp(have->comment, rs.comment) && have->summary &&
	    !strcmp(have->summary, rs.summary)) {
		firewall_ruleset_free(&rs);
		return 0;
	}
	op = plan_add(p, OP_FIREWALL_SET, PHASE_GUARD, have ? VERB_CHANGE : VERB_CREATE, OBJECT);
	if (!op) {
		firewall_ruleset_free(&rs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < want->n_vnets; i++)
		n_secure += want->vnets[i].transport == TRANSPORT_SECURE;
	if (!have)
		op_detail(op, "guard for %zu plain and %zu secure vnets, WireGuard port %u",
			  want->n_vnets - n_secure, n_secure, want->fabric.listen_port);
	else if (strcmp(have->comment, rs.comment))
		op_detail(op, "definition changed: replaced in one transaction, counters kept");
	else
		describe_drift(rs.summary, have->summary ? have->summary : "", op);
	op->text = rs.text;
	rs.text = NULL;
	firewall_ruleset_free(&rs);
	return 0;
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
	op = plan_add(p, OP_FIREWALL_DELETE, PHASE_UNGUARD, VERB_DELETE, OBJECT);
	if (!op)
		return -ENOMEM;
	op_detail(op, "the guard goes last");
	return 0;
}

/* --- applying ---------------------------------------------------------------------- */

int firewall_apply(struct op *op)
{
	/* the empty declaration makes the delete succeed when there is no table yet */
	static const char replace[] = "table " TABLE_NAME "\ndelete table " TABLE_NAME "\n";
	/*
	 * Planned as missing: "create table" fails, changing nothing, when a table
	 * appeared since. It carries the comment (the ownership mark, which only a
	 * create sets); the declaration that follows fills the new table.
	 */
	const char *mark = NULL;
	char err[1024];
	struct sbuf b = {0};
	char *cmd;
	int ret;

	if (op->type != OP_FIREWALL_SET && op->type != OP_FIREWALL_DELETE)
		return -EINVAL;
	if (op->type == OP_FIREWALL_SET && !op->text)
		return -EINVAL;
	if (op->type == OP_FIREWALL_SET && op->verb == VERB_CREATE)
		mark = strstr(op->text, "\n\tcomment \"");
	/* one buffer, one transaction: the old table is never gone without the new one */
	if (mark)
		sbuf_printf(&b, "create table " TABLE_NAME " {%.*s\n}\n",
			    (int)strcspn(mark + 1, "\n") + 1, mark);
	else
		sbuf_printf(&b, "%s", replace);
	sbuf_printf(&b, "%s", op->type == OP_FIREWALL_SET ? op->text : "");
	cmd = sbuf_take(&b);
	if (!cmd)
		return -ENOMEM;
	ret = nft_run(0, cmd, NULL, err, sizeof(err));
	free(cmd);
	if (ret == 0)
		return 0;
	ret = nft_errno(err);
	if (op->type == OP_FIREWALL_DELETE)
		log_error("%s: cannot be removed: %s", OBJECT, err);
	else if (ret == -EOPNOTSUPP || ret == -ENOENT)
		log_error("%s: the kernel refused it: %s; the guard needs nf_tables (modprobe "
			  "nf_tables); no VXLAN or WireGuard device is made without it",
			  OBJECT, err);
	else if (ret == -EPERM)
		log_error("%s: not allowed: %s; fabricd needs CAP_NET_ADMIN", OBJECT, err);
	else if (ret == -EINVAL)
		log_error("%s: nft refused the ruleset fabricd rendered (please report this, with "
			  "`fabricd plan` output): %s",
			  OBJECT, err);
	else
		log_error("%s: the kernel refused it: %s", OBJECT, err);
	return ret;
}

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
