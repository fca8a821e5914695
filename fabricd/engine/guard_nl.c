// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/guard_nl.c - reading the `inet fabricd` table over nftables netlink
 * (libmnl dumps of the table, its objects, sets, set elements, chains and
 * rules) into an observation (kinds/guard.c builds it). libnftables' listing
 * turned 64,512 set elements into JSON and text through GMP, most of a
 * `plan`; the dumps hand over the elements' keys as they are.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdbool.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/guard_io.h"
#include "engine/guard_prints.h"
#include "engine/lock.h"
#include "kinds/guard_priv.h"
#include "netlink/nl.h"

/* libnftnl's user data TLV for a comment (NFTNL_UDATA_TABLE_COMMENT, NFTNL_UDATA_RULE_COMMENT) */
#define UDATA_COMMENT 0

/* A verdict map's element: key (a port, as fabricd's are) and verdict. */
struct map_elem {
	uint32_t key;
	char verdict[NFT_CHAIN_MAXNAMELEN + 16];
};

struct map_elems {
	size_t n;
	bool more; /* more than fit: not a map fabricd makes */
	struct map_elem el[8];
};

struct reader {
	struct nl_sock s;
	struct firewall_obs *fw;
	const char *set; /* the set whose elements are dumped */
	/* per chain: its rules' verdicts, in order */
	size_t n_chains;
	struct {
		char name[NFT_CHAIN_MAXNAMELEN];
		char verdicts[512];
	} chains[16];
	struct map_elems map; /* the verdict map whose elements are dumped */
	/* the rules' prints as fabricd wrote them (known), and as read now (seen) */
	struct guard_prints known, seen;
	bool table_found;
	int err; /* a callback's failure (ENOMEM) */
};

/* A request for the table's objects of one kind: type, with the table name as attr. */
static struct nlmsghdr *start(struct reader *rd, char *buf, uint16_t type, uint16_t name_attr)
{
	struct nlmsghdr *nlh = nl_msg_start(&rd->s, buf, (NFNL_SUBSYS_NFTABLES << 8) | type, 0);
	struct nfgenmsg *nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));

	nfg->nfgen_family = NFPROTO_INET;
	nfg->version = NFNETLINK_V0;
	mnl_attr_put_strz(nlh, name_attr, FIREWALL_TABLE);
	return nlh;
}

/* The attributes of an nftables message, by type (at most max). */
static void attrs_of(const struct nlmsghdr *nlh, const struct nlattr **tb, int max)
{
	const struct nlattr *a;

	memset(tb, 0, (size_t)(max + 1) * sizeof(*tb));
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
	{
		if (mnl_attr_get_type(a) <= max)
			tb[mnl_attr_get_type(a)] = a;
	}
}

static const char *str_attr(const struct nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0 ? mnl_attr_get_str(a) : NULL;
}

/*
 * Whether a dumped object is of fabricd's table. The dumps ask for that table,
 * but the kernel filters some only by family (chains: every inet table's
 * come), so each object's table attribute is checked; one without is counted.
 */
static bool ours(const struct nlattr *table)
{
	const char *name = str_attr(table);

	return !table || (name && !strcmp(name, FIREWALL_TABLE));
}

static uint32_t u32_attr(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) >= 4 ? ntohl(mnl_attr_get_u32(a)) : 0;
}

/* The comment in an object's user data (TLVs of one type byte, one length byte), or NULL. */
static const char *comment_of(const struct nlattr *ud)
{
	const uint8_t *p, *end;

	if (!ud)
		return NULL;
	p = mnl_attr_get_payload(ud);
	end = p + mnl_attr_get_payload_len(ud);
	while (p + 2 <= end && p + 2 + p[1] <= end) {
		/* nft writes the comment with its NUL */
		if (p[0] == UDATA_COMMENT && p[1] > 0 && !p[2 + p[1] - 1])
			return (const char *)p + 2;
		p += 2 + p[1];
	}
	return NULL;
}

static int table_cb(const struct nlmsghdr *nlh, void *data)
{
	struct reader *rd = data;
	const struct nlattr *tb[NFTA_TABLE_MAX + 1];
	const char *comment;

	attrs_of(nlh, tb, NFTA_TABLE_MAX);
	rd->table_found = true;
	/* a dormant table keeps every rule and hooks none: the guard is off */
	if (u32_attr(tb[NFTA_TABLE_FLAGS]) & NFT_TABLE_F_DORMANT) {
		rd->err = firewall_obs_add_other(rd->fw, "flag dormant (no hook is in use)");
		if (rd->err)
			return MNL_CB_ERROR;
	}
	comment = comment_of(tb[NFTA_TABLE_USERDATA]);
	if (comment)
		firewall_obs_set_comment(rd->fw, comment);
	return MNL_CB_OK;
}

static int obj_cb(const struct nlmsghdr *nlh, void *data)
{
	struct reader *rd = data;
	const struct nlattr *tb[NFTA_OBJ_MAX + 1], *a;
	const char *name;
	uint64_t packets = 0, bytes = 0;

	attrs_of(nlh, tb, NFTA_OBJ_MAX);
	if (!ours(tb[NFTA_OBJ_TABLE]))
		return MNL_CB_OK;
	name = str_attr(tb[NFTA_OBJ_NAME]);
	if (u32_attr(tb[NFTA_OBJ_TYPE]) != NFT_OBJECT_COUNTER || !name || !tb[NFTA_OBJ_DATA]) {
		rd->err = firewall_obs_add_other(rd->fw, "object");
		return rd->err ? MNL_CB_ERROR : MNL_CB_OK;
	}
	mnl_attr_for_each_nested(a, tb[NFTA_OBJ_DATA])
	{
		if (mnl_attr_get_payload_len(a) < 8)
			continue;
		if (mnl_attr_get_type(a) == NFTA_COUNTER_PACKETS)
			packets = be64toh(mnl_attr_get_u64(a));
		else if (mnl_attr_get_type(a) == NFTA_COUNTER_BYTES)
			bytes = be64toh(mnl_attr_get_u64(a));
	}
	rd->err = firewall_obs_add_counter(rd->fw, name, packets, bytes);
	return rd->err ? MNL_CB_ERROR : MNL_CB_OK;
}

/* NFTA_SET_DESC's NFTA_SET_DESC_SIZE: the size the set was declared with (0: none). */
static uint32_t declared_size(const struct nlattr *desc)
{
	const struct nlattr *a;

	if (!desc)
		return 0;
	mnl_attr_for_each_nested(a, desc)
	{
		if (mnl_attr_get_type(a) == NFTA_SET_DESC_SIZE && mnl_attr_get_payload_len(a) >= 4)
			return ntohl(mnl_attr_get_u32(a));
	}
	return 0;
}

static int set_cb(const struct nlmsghdr *nlh, void *data)
{
	struct reader *rd = data;
	const struct nlattr *tb[NFTA_SET_MAX + 1];
	const char *name;

	attrs_of(nlh, tb, NFTA_SET_MAX);
	name = str_attr(tb[NFTA_SET_NAME]);
	/* anonymous sets belong to rules ("{ a, b }" inline): the rule count covers them */
	if (!name || (u32_attr(tb[NFTA_SET_FLAGS]) & NFT_SET_ANONYMOUS) ||
	    !ours(tb[NFTA_SET_TABLE]))
		return MNL_CB_OK;
	rd->err = firewall_obs_add_set(rd->fw, name, declared_size(tb[NFTA_SET_DESC]));
	return rd->err ? MNL_CB_ERROR : MNL_CB_OK;
}

/* One element's key: NFTA_SET_ELEM_KEY { NFTA_DATA_VALUE }. */
static int add_elem(struct reader *rd, const struct nlattr *elem)
{
	const struct nlattr *a, *v;

	mnl_attr_for_each_nested(a, elem)
	{
		if (mnl_attr_get_type(a) != NFTA_SET_ELEM_KEY)
			continue;
		mnl_attr_for_each_nested(v, a)
		{
			if (mnl_attr_get_type(v) == NFTA_DATA_VALUE)
				return firewall_obs_add_elem(rd->fw, rd->set,
							     mnl_attr_get_payload(v),
							     mnl_attr_get_payload_len(v));
		}
	}
	return firewall_obs_add_elem(rd->fw, rd->set, NULL, 0);
}

/* A set-element dump message's list of elements, NULL when none or not of fabricd's table. */
static const struct nlattr *elements_of(const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[NFTA_SET_ELEM_LIST_MAX + 1];

	attrs_of(nlh, tb, NFTA_SET_ELEM_LIST_MAX);
	return ours(tb[NFTA_SET_ELEM_LIST_TABLE]) ? tb[NFTA_SET_ELEM_LIST_ELEMENTS] : NULL;
}

static int elem_cb(const struct nlmsghdr *nlh, void *data)
{
	struct reader *rd = data;
	const struct nlattr *list = elements_of(nlh), *e;

	if (!list)
		return MNL_CB_OK;
	mnl_attr_for_each_nested(e, list)
	{
		if ((rd->err = add_elem(rd, e)))
			return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* A verdict (an NFTA_DATA_VERDICT nest) by name: "accept", "jump:CHAIN", ... */
static void verdict_name(const struct nlattr *verdict, char *out, size_t len)
{
	const struct nlattr *v;
	const char *chain = "?";
	int32_t code = NF_ACCEPT;

	mnl_attr_for_each_nested(v, verdict)
	{
		if (mnl_attr_get_type(v) == NFTA_VERDICT_CODE)
			code = (int32_t)u32_attr(v);
		else if (mnl_attr_get_type(v) == NFTA_VERDICT_CHAIN && str_attr(v))
			chain = str_attr(v);
	}
	switch (code) {
	case NF_ACCEPT:
		snprintf(out, len, "accept");
		break;
	case NF_DROP:
		snprintf(out, len, "drop");
		break;
	case NFT_JUMP:
		snprintf(out, len, "jump:%s", chain);
		break;
	case NFT_GOTO:
		snprintf(out, len, "goto:%s", chain);
		break;
	case NFT_RETURN:
		snprintf(out, len, "return");
		break;
	case NFT_CONTINUE:
		snprintf(out, len, "continue");
		break;
	default:
		snprintf(out, len, "verdict:%d", code);
	}
}

/* An NFTA_DATA_* nest's verdict by name into out; out unchanged when it holds a value. */
static void data_verdict(const struct nlattr *data, char *out, size_t len)
{
	const struct nlattr *d;

	mnl_attr_for_each_nested(d, data)
	{
		if (mnl_attr_get_type(d) == NFTA_DATA_VERDICT)
			verdict_name(d, out, len);
	}
}

/* An expression's verdict into out: immediate, a verdict map ("vmap{SET}"), reject, ... */
static void expr_verdict(const char *name, const struct nlattr *data, char *out, size_t len)
{
	static const char *const ending[] = {"reject", "queue", "fwd", "synproxy"};
	const struct nlattr *a, *set = NULL;
	bool to_verdict = false;

	if (!strcmp(name, "immediate") && data) {
		mnl_attr_for_each_nested(a, data)
		{
			if (mnl_attr_get_type(a) == NFTA_IMMEDIATE_DREG &&
			    u32_attr(a) != NFT_REG_VERDICT)
				return;
			if (mnl_attr_get_type(a) == NFTA_IMMEDIATE_DATA)
				data_verdict(a, out, len);
		}
	} else if (!strcmp(name, "lookup") && data) {
		mnl_attr_for_each_nested(a, data)
		{
			if (mnl_attr_get_type(a) == NFTA_LOOKUP_SET)
				set = a;
			else if (mnl_attr_get_type(a) == NFTA_LOOKUP_DREG)
				to_verdict = u32_attr(a) == NFT_REG_VERDICT;
		}
		/* the map's elements replace the set's name once the rules are read */
		if (to_verdict)
			snprintf(out, len, "vmap{@%s}", str_attr(set) ? str_attr(set) : "?");
	} else {
		for (size_t i = 0; i < sizeof(ending) / sizeof(ending[0]); i++) {
			if (!strcmp(name, ending[i]))
				snprintf(out, len, "%s", ending[i]);
		}
	}
}

/* A rule's verdict, the last one its expressions give; "-" for none. */
static void rule_verdict(const struct nlattr *exprs, char *out, size_t len)
{
	const struct nlattr *e, *a, *name, *data;

	snprintf(out, len, "-");
	if (!exprs)
		return;
	mnl_attr_for_each_nested(e, exprs)
	{
		name = data = NULL;
		mnl_attr_for_each_nested(a, e)
		{
			if (mnl_attr_get_type(a) == NFTA_EXPR_NAME)
				name = a;
			else if (mnl_attr_get_type(a) == NFTA_EXPR_DATA)
				data = a;
		}
		if (str_attr(name))
			expr_verdict(str_attr(name), data, out, len);
	}
}

/*
 * The mark fabricd's comment gives a rule (kinds/guard_chains.c), "by hand"
 * for a rule without one: a rule nft wrote from other text than fabricd's.
 */
static void rule_mark(const struct nlattr *userdata, char *out, size_t len)
{
	const char *comment = comment_of(userdata);
	size_t n = strlen(FIREWALL_RULE_MARK);

	if (comment && !strncmp(comment, FIREWALL_RULE_MARK, n) && strlen(comment + n) == 6 &&
	    strspn(comment + n, "0123456789abcdef") == 6)
		snprintf(out, len, "%s", comment + n);
	else
		snprintf(out, len, "by hand");
}

/*
 * A rule with fabricd's mark whose expressions are not those fabricd wrote
 * under that mark (guard_prints.h): rewritten by hand with fabricd's
 * comment copied. Its mark becomes "altered". Every marked rule's print is
 * kept in rd->seen, for the file.
 */
static void check_print(struct reader *rd, const struct nlattr *exprs, char *mark, size_t len)
{
	const struct guard_print *known;
	uint64_t print;

	if (!strcmp(mark, "by hand"))
		return;
	print =
	    exprs ? fnv1a(FNV1A_INIT, mnl_attr_get_payload(exprs), mnl_attr_get_payload_len(exprs))
		  : 0;
	guard_prints_add(&rd->seen, mark, print);
	known = guard_prints_find(&rd->known, mark);
	if (known && known->print != print)
		snprintf(mark, len, "altered");
}

/* Each chain's rules' verdicts and marks, the chains added as they come. */
static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct reader *rd = data;
	const struct nlattr *tb[NFTA_RULE_MAX + 1];
	const char *chain;
	char verdict[NFT_CHAIN_MAXNAMELEN + 16], mark[16];
	size_t i = 0, used;

	attrs_of(nlh, tb, NFTA_RULE_MAX);
	chain = str_attr(tb[NFTA_RULE_CHAIN]);
	if (!chain || !ours(tb[NFTA_RULE_TABLE]))
		return MNL_CB_OK;
	while (i < rd->n_chains && strcmp(rd->chains[i].name, chain))
		i++;
	if (i == sizeof(rd->chains) / sizeof(rd->chains[0])) {
		/* more chains than fabricd makes by far: the table is not as rendered */
		rd->err = firewall_obs_add_other(rd->fw, "chain");
		return rd->err ? MNL_CB_ERROR : MNL_CB_OK;
	}
	if (i == rd->n_chains) {
		snprintf(rd->chains[i].name, sizeof(rd->chains[0].name), "%s", chain);
		rd->chains[i].verdicts[0] = '\0';
		rd->n_chains++;
	}
	rule_verdict(tb[NFTA_RULE_EXPRESSIONS], verdict, sizeof(verdict));
	rule_mark(tb[NFTA_RULE_USERDATA], mark, sizeof(mark));
	check_print(rd, tb[NFTA_RULE_EXPRESSIONS], mark, sizeof(mark));
	/* a chain of more rules than fits differs from every rendered one anyway */
	used = strlen(rd->chains[i].verdicts);
	snprintf(rd->chains[i].verdicts + used, sizeof(rd->chains[0].verdicts) - used, "%s%s(%s)",
		 used ? " " : "", verdict, mark);
	return MNL_CB_OK;
}

static void rules_reset(void *data)
{
	struct reader *rd = data;

	rd->n_chains = 0;
	memset(&rd->seen, 0, sizeof(rd->seen));
}

/* One element: its key (big-endian, as a port is) and its verdict. */
static void add_map_elem(struct map_elems *m, const struct nlattr *elem)
{
	const struct nlattr *a, *v;
	uint32_t key = 0;

	if (m->n == sizeof(m->el) / sizeof(m->el[0])) {
		m->more = true;
		return;
	}
	snprintf(m->el[m->n].verdict, sizeof(m->el[0].verdict), "-");
	mnl_attr_for_each_nested(a, elem)
	{
		if (mnl_attr_get_type(a) == NFTA_SET_ELEM_DATA)
			data_verdict(a, m->el[m->n].verdict, sizeof(m->el[0].verdict));
		if (mnl_attr_get_type(a) != NFTA_SET_ELEM_KEY)
			continue;
		mnl_attr_for_each_nested(v, a)
		{
			const uint8_t *b = mnl_attr_get_payload(v);

			for (uint16_t i = 0; mnl_attr_get_type(v) == NFTA_DATA_VALUE &&
					     i < mnl_attr_get_payload_len(v) && i < 4;
			     i++)
				key = key << 8 | b[i];
		}
	}
	m->el[m->n++].key = key;
}

static int map_elem_cb(const struct nlmsghdr *nlh, void *data)
{
	struct reader *rd = data;
	const struct nlattr *list = elements_of(nlh), *e;

	if (!list)
		return MNL_CB_OK;
	mnl_attr_for_each_nested(e, list) add_map_elem(&rd->map, e);
	return MNL_CB_OK;
}

static void map_reset(void *data)
{
	struct reader *rd = data;

	rd->map.n = 0;
	rd->map.more = false;
}

/* The map's elements by key: "4789:jump:plain_vxlan_in,4790:..." (the kernel's order is its
 * hash's). */
static int by_key(const void *a, const void *b)
{
	uint32_t x = ((const struct map_elem *)a)->key, y = ((const struct map_elem *)b)->key;

	return (x > y) - (x < y);
}

static void map_text(struct map_elems *m, char *out, size_t len)
{
	size_t used = 0;

	qsort(m->el, m->n, sizeof(m->el[0]), by_key);
	out[0] = '\0';
	for (size_t i = 0; i < m->n && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%u:%s", i ? "," : "",
					 m->el[i].key, m->el[i].verdict);
	if (m->more && used < len)
		snprintf(out + used, len - used, ",...");
}

/* Each "vmap{@SET}" of the chains' verdicts, the map's elements in the set name's place. */
static int read_maps(struct reader *rd)
{
	char buf[NL_MSG_BUF], elems[384], rest[512], *at, *end;
	struct nlmsghdr *nlh;
	int ret;

	for (size_t i = 0; i < rd->n_chains; i++) {
		char *v = rd->chains[i].verdicts;

		while ((at = strstr(v, "vmap{@")) && (end = strchr(at, '}'))) {
			*end = '\0';
			map_reset(rd);
			nlh = start(rd, buf, NFT_MSG_GETSETELEM, NFTA_SET_ELEM_LIST_TABLE);
			mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, at + strlen("vmap{@"));
			ret = nl_dump(&rd->s, nlh, map_elem_cb, map_reset, rd);
			/* gone since the rules were read (nft changed the table): not as made */
			if (ret == -ENOENT)
				snprintf(elems, sizeof(elems), "?");
			else if (ret < 0)
				return ret;
			else
				map_text(&rd->map, elems, sizeof(elems));
			snprintf(rest, sizeof(rest), "%s", end + 1);
			snprintf(at, sizeof(rd->chains[0].verdicts) - (size_t)(at - v),
				 "vmap{%s}%s", elems, rest);
		}
	}
	return 0;
}

/* Base chains: "filter input -10 accept"; hook and policy by name. */
static int chain_line_cb(const struct nlmsghdr *nlh, void *data)
{
	static const char *const hooks[] = {"prerouting", "input",	 "forward",
					    "output",	  "postrouting", "ingress"};
	struct reader *rd = data;
	const struct nlattr *tb[NFTA_CHAIN_MAX + 1], *a;
	const char *name, *hook = NULL;
	long long prio = 0;
	const char *verdicts = "";

	attrs_of(nlh, tb, NFTA_CHAIN_MAX);
	name = str_attr(tb[NFTA_CHAIN_NAME]);
	if (!name || !ours(tb[NFTA_CHAIN_TABLE]))
		return MNL_CB_OK;
	for (size_t i = 0; i < rd->n_chains; i++) {
		if (!strcmp(rd->chains[i].name, name))
			verdicts = rd->chains[i].verdicts;
	}
	if (tb[NFTA_CHAIN_HOOK]) {
		hook = "?";
		mnl_attr_for_each_nested(a, tb[NFTA_CHAIN_HOOK])
		{
			uint32_t v = u32_attr(a);

			if (mnl_attr_get_type(a) == NFTA_HOOK_HOOKNUM)
				hook = v < sizeof(hooks) / sizeof(hooks[0]) ? hooks[v] : "?";
			else if (mnl_attr_get_type(a) == NFTA_HOOK_PRIORITY)
				prio = (int32_t)v;
		}
	}
	rd->err = firewall_obs_add_chain(rd->fw, name, str_attr(tb[NFTA_CHAIN_TYPE]), hook, prio,
					 !tb[NFTA_CHAIN_POLICY]				? NULL
					 : u32_attr(tb[NFTA_CHAIN_POLICY]) == NF_ACCEPT ? "accept"
											: "drop",
					 verdicts);
	return rd->err ? MNL_CB_ERROR : MNL_CB_OK;
}

static int dump(struct reader *rd, uint16_t type, uint16_t name_attr, mnl_cb_t cb,
		void (*reset)(void *data))
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = start(rd, buf, type, name_attr);
	int ret = nl_dump(&rd->s, nlh, cb, reset, rd);

	return rd->err ? rd->err : ret;
}

/* An interrupted dump starts again: what it gave so far goes. */
static void elems_reset(void *data)
{
	struct reader *rd = data;

	firewall_obs_clear_set(rd->fw, firewall_set_by_name(rd->set));
}

/* The set names, then each fabricd set's elements. */
static int read_sets(struct reader *rd)
{
	int ret = dump(rd, NFT_MSG_GETSET, NFTA_SET_TABLE, set_cb, NULL);

	for (int i = 0; !ret && i < FW_N_SETS; i++) {
		char buf[NL_MSG_BUF];
		struct nlmsghdr *nlh;

		if (!firewall_obs_has_set(rd->fw, (enum firewall_set_id)i))
			continue;
		rd->set = firewall_set_names[i];
		nlh = start(rd, buf, NFT_MSG_GETSETELEM, NFTA_SET_ELEM_LIST_TABLE);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, rd->set);
		ret = nl_dump(&rd->s, nlh, elem_cb, elems_reset, rd);
		ret = rd->err ? rd->err : ret;
	}
	return ret;
}

/* Flowtables: never fabricd's. */
static int other_cb(const struct nlmsghdr *nlh, void *data)
{
	struct reader *rd = data;
	const struct nlattr *tb[NFTA_FLOWTABLE_MAX + 1];

	attrs_of(nlh, tb, NFTA_FLOWTABLE_MAX);
	if (!ours(tb[NFTA_FLOWTABLE_TABLE]))
		return MNL_CB_OK;
	rd->err = firewall_obs_add_other(rd->fw, "flowtable");
	return rd->err ? MNL_CB_ERROR : MNL_CB_OK;
}

static int read_table(struct reader *rd, bool counters_only)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = start(rd, buf, NFT_MSG_GETTABLE, NFTA_TABLE_NAME);
	int ret = nl_request(&rd->s, nlh, table_cb, rd);

	if (ret < 0)
		return ret;
	if ((ret = dump(rd, NFT_MSG_GETOBJ, NFTA_OBJ_TABLE, obj_cb, NULL)) < 0)
		return ret;
	if (counters_only)
		return firewall_obs_finish(rd->fw);
	if ((ret = read_sets(rd)) < 0 ||
	    (ret = dump(rd, NFT_MSG_GETFLOWTABLE, NFTA_FLOWTABLE_TABLE, other_cb, NULL)) < 0 ||
	    (ret = dump(rd, NFT_MSG_GETRULE, NFTA_RULE_TABLE, rule_cb, rules_reset)) < 0 ||
	    (ret = read_maps(rd)) < 0 ||
	    (ret = dump(rd, NFT_MSG_GETCHAIN, NFTA_CHAIN_TABLE, chain_line_cb, NULL)) < 0)
		return ret;
	return firewall_obs_finish(rd->fw);
}

/*
 * Its own socket, opened with mnl_socket_open2 (libnftables opens its
 * sockets with mnl_socket_open): tests/integration/test_guard_ownership.py
 * makes exactly this read fail. 0 or -errno.
 */
static int reader_open(struct reader *rd)
{
	rd->s.mnl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!rd->s.mnl || mnl_socket_bind(rd->s.mnl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	rd->s.bus = NETLINK_NETFILTER;
	rd->s.portid = mnl_socket_get_portid(rd->s.mnl);
	rd->s.seq = 1;
	rd->fw = firewall_obs_new();
	return rd->fw ? 0 : -ENOMEM;
}

static int observe(struct firewall_obs **out, bool counters_only)
{
	struct reader rd = {0};
	int ret;

	*out = NULL;
	if (!counters_only)
		guard_prints_load(&rd.known);
	ret = reader_open(&rd);
	if (ret == 0)
		ret = read_table(&rd, counters_only);
	/* a table fabricd finds without prints (made by a fabricd before them): trusted once */
	if (ret == 0 && !counters_only && rd.table_found && rd.seen.n && !rd.seen.full &&
	    node_lock_held() && !guard_prints_kept())
		(void)guard_prints_save(&rd.seen);
	if (rd.s.mnl)
		mnl_socket_close(rd.s.mnl);
	/* none (yet), or no nf_tables in this kernel: no table either; apply says why */
	if ((ret == -ENOENT || ret == -EOPNOTSUPP || ret == -EPROTONOSUPPORT) && !rd.table_found) {
		firewall_obs_free(rd.fw);
		return 0;
	}
	if (ret < 0) {
		/* a table we cannot read may be someone else's: never plan over it */
		log_error("%s: cannot be read: %s; nothing was changed", OBJECT, strerror(-ret));
		firewall_obs_free(rd.fw);
		return ret;
	}
	*out = rd.fw;
	return 0;
}

int firewall_observe(struct firewall_obs **out)
{
	return observe(out, false);
}

int firewall_observe_counters(struct firewall_obs **out)
{
	return observe(out, true);
}

struct gen_reply {
	uint32_t id;
	bool seen;
};

static int gen_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[NFTA_GEN_MAX + 1];
	struct gen_reply *g = data;

	if ((nlh->nlmsg_type & 0xff) != NFT_MSG_NEWGEN ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct nfgenmsg)))
		return MNL_CB_OK;
	attrs_of(nlh, tb, NFTA_GEN_MAX);
	if (tb[NFTA_GEN_ID] && mnl_attr_validate(tb[NFTA_GEN_ID], MNL_TYPE_U32) == 0) {
		g->id = ntohl(mnl_attr_get_u32(tb[NFTA_GEN_ID]));
		g->seen = true;
	}
	return MNL_CB_OK;
}

int firewall_generation(uint32_t *gen)
{
	struct reader rd = {0};
	struct gen_reply got = {0};
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;
	int ret = reader_open(&rd);

	if (ret == 0) {
		nlh = nl_msg_start(&rd.s, buf, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETGEN, 0);
		nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
		nfg->nfgen_family = AF_UNSPEC;
		nfg->version = NFNETLINK_V0;
		ret = nl_request(&rd.s, nlh, gen_cb, &got);
	}
	if (rd.s.mnl)
		mnl_socket_close(rd.s.mnl);
	firewall_obs_free(rd.fw);
	if (ret == 0 && !got.seen)
		ret = -EPROTO;
	*gen = got.id;
	return ret;
}

int firewall_learn_prints(void)
{
	struct reader rd = {0};
	int ret = reader_open(&rd);

	if (ret == 0)
		ret = dump(&rd, NFT_MSG_GETRULE, NFTA_RULE_TABLE, rule_cb, rules_reset);
	if (ret == 0 && !rd.seen.full)
		ret = guard_prints_save(&rd.seen);
	if (rd.s.mnl)
		mnl_socket_close(rd.s.mnl);
	firewall_obs_free(rd.fw);
	return ret;
}
