// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/plan.c - the op list: building, describing, printing, counting. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plan.h"
#include "definition/wgkey.h"
#include "kinds/kind.h"

void plan_init(struct plan *p, const char *owner)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->owner, sizeof(p->owner), "%s", owner);
}

static void ops_free(struct op **ops, size_t *n, size_t *cap)
{
	for (size_t i = 0; i < *n; i++) {
		free((*ops)[i].note);
		free((*ops)[i].text);
	}
	free(*ops);
	*ops = NULL;
	*n = *cap = 0;
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	ops_free(&p->ops, &p->n, &p->cap);
	ops_free(&p->later, &p->n_later, &p->cap_later);
}

/*
 * A zeroed op at the end of the array, or NULL on ENOMEM. The array grows by
 * realloc: ops hold no key material, and a large block moves without a copy.
 */
static struct op *ops_push(struct op **ops, size_t *n, size_t *cap)
{
	struct op *op;

	if (*n == *cap) {
		size_t grown_cap = *cap ? *cap * 2 : 32;
		struct op *grown = realloc(*ops, grown_cap * sizeof(*grown));

		if (!grown)
			return NULL;
		*ops = grown;
		*cap = grown_cap;
	}
	op = &(*ops)[(*n)++];
	memset(op, 0, sizeof(*op));
	return op;
}

static void op_init(struct op *op, int kind, enum op_type type, enum op_phase phase,
		    enum op_verb verb, const char *ifname)
{
	op->type = (uint8_t)type;
	op->phase = (uint8_t)phase;
	op->verb = (uint8_t)verb;
	op->kind = (uint8_t)kind;
	if (ifname)
		snprintf(op->ifname, sizeof(op->ifname), "%s", ifname);
}

struct op *plan_add(struct plan *p, int kind, enum op_type type, enum op_phase phase,
		    enum op_verb verb, const char *ifname)
{
	struct op *op = ops_push(&p->ops, &p->n, &p->cap);

	if (op)
		op_init(op, kind, type, phase, verb, ifname);
	return op;
}

struct op *plan_add_later(struct plan *p, long long due, long long due_in, int kind,
			  enum op_type type, enum op_verb verb, const char *ifname)
{
	struct op *op = ops_push(&p->later, &p->n_later, &p->cap_later);

	if (!op)
		return NULL;
	op_init(op, kind, type, PHASE_RETIRE, verb, ifname);
	op->due = due;
	op->due_in = due_in;
	return op;
}

long long plan_next_due(const struct plan *p)
{
	long long next = 0;

	for (size_t i = 0; i < p->n_later; i++) {
		if (!next || p->later[i].due < next)
			next = p->later[i].due;
	}
	return next;
}

static void text_vadd(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t len = strlen(buf);

	if (len && len + 2 < size) {
		strcpy(buf + len, ", ");
		len += 2;
	}
	if (len < size)
		vsnprintf(buf + len, size - len, fmt, ap);
}

void text_add(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	text_vadd(buf, len, fmt, ap);
	va_end(ap);
}

void op_detail(struct op *op, const char *fmt, ...)
{
	char buf[OP_DETAIL_MAX];
	va_list ap;

	snprintf(buf, sizeof(buf), "%s", op->note ? op->note : "");
	va_start(ap, fmt);
	text_vadd(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* on ENOMEM the text for people stays shorter; the op itself is whole */
	char *grown = realloc(op->note, strlen(buf) + 1);

	if (grown) {
		strcpy(grown, buf);
		op->note = grown;
	}
}

void op_delete_names(struct op *op, const char *kind, const char *name)
{
	snprintf(op->u.del.kind, sizeof(op->u.del.kind), "%s", kind ? kind : "");
	snprintf(op->u.del.name, sizeof(op->u.del.name), "%s", name);
}

const char *op_verb_word(enum op_verb v)
{
	return v == VERB_CREATE ? "create" : v == VERB_DELETE ? "remove" : "change";
}

/* What an op acts on, from its type and payload: "vxlan vx100", "fdb vx100 remote 192.0.2.2". */
static void op_object(const struct op *op, char *buf, size_t len)
{
	char a[IP_ADDR_STRLEN];
	const struct kind *k = kind_by_id(op->kind);

	switch ((enum op_type)op->type) {
	case OP_BRIDGE_CREATE:
		snprintf(buf, len, "bridge %s", op->ifname);
		return;
	case OP_VXLAN_CREATE:
		snprintf(buf, len, "vxlan %s", op->ifname);
		return;
	case OP_LINK_DELETE:
		snprintf(buf, len, "%s %s", op->u.del.kind[0] ? op->u.del.kind : "link",
			 op->u.del.name);
		return;
	case OP_FDB_ADD:
	case OP_FDB_DEL:
		snprintf(buf, len, "fdb %s remote %s", op->ifname,
			 ip_addr_str(&op->u.dst, a, sizeof(a)));
		return;
	case OP_ADDR_ADD:
	case OP_ADDR_DEL:
		snprintf(buf, len, "address %s/%u on %s",
			 ip_addr_str(&op->u.prefix.addr, a, sizeof(a)), op->u.prefix.len,
			 op->ifname);
		return;
	case OP_WG_PEER:
		if (op->u.peer.name) {
			snprintf(buf, len, "peer %s", op->u.peer.name);
		} else {
			/* a peer no node has: named by its key's start, as `wg` abbreviates */
			char b64[WGKEY_B64_LEN] = "";

			if (op->u.peer.have)
				wgkey_to_base64(b64, op->u.peer.have->public_key);
			snprintf(buf, len, "peer %.8s...", b64);
		}
		return;
	default:
		/* the rest name their kind: "bridge vnet1", "fabric wgfab0", the guard's table */
		snprintf(buf, len, "%s%s%s", k ? k->noun : "", op->ifname[0] ? " " : "",
			 op->ifname);
	}
}

void op_describe(const struct op *op, struct op_text *t)
{
	const struct kind *k = kind_by_id(op->kind);

	op_object(op, t->object, sizeof(t->object));
	t->detail[0] = '\0';
	if (k && k->describe)
		k->describe(op, t->detail, sizeof(t->detail));
	if (op->note)
		text_add(t->detail, sizeof(t->detail), "%s", op->note);
}

static void print_op(const struct op *op, FILE *f)
{
	struct op_text t;

	op_describe(op, &t);
	fprintf(f, "%c %s: %s%s%s%s\n", (char)op->verb, t.object,
		op_verb_word((enum op_verb)op->verb), t.detail[0] ? " (" : "", t.detail,
		t.detail[0] ? ")" : "");
}

void plan_print(const struct plan *p, FILE *f)
{
	for (size_t i = 0; i < p->n; i++)
		print_op(&p->ops[i], f);
	for (size_t i = 0; i < p->n_later; i++) {
		fprintf(f, "later, in %lld s: ", p->later[i].due_in);
		print_op(&p->later[i], f);
	}
}

void plan_count(const struct plan *p, size_t *created, size_t *changed, size_t *deleted)
{
	*created = *changed = *deleted = 0;
	for (size_t i = 0; i < p->n; i++) {
		switch ((enum op_verb)p->ops[i].verb) {
		case VERB_CREATE:
			(*created)++;
			break;
		case VERB_CHANGE:
			(*changed)++;
			break;
		case VERB_DELETE:
			(*deleted)++;
			break;
		}
	}
}
