// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/plan.c - the op list: building, counting (plan_text.c: its text for people). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plan.h"

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

static bool creates_link(const struct op *op)
{
	return op->type == OP_BRIDGE_CREATE || op->type == OP_VXLAN_CREATE ||
	       op->type == OP_WG_CREATE;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Whether op changes a link this plan creates (its port isolation, its
 * mute): part of making it, not a change to count. made: the created
 * links' names, sorted (NULL: none, or no memory; then every change counts).
 */
static bool of_a_made_link(const struct op *op, const char **made, size_t n_made)
{
	const char *name = op->ifname;

	return made && op->ifname[0] && !creates_link(op) &&
	       bsearch(&name, made, n_made, sizeof(*made), name_cmp);
}

void plan_count(const struct plan *p, size_t *created, size_t *changed, size_t *deleted)
{
	const char **made = NULL;
	size_t n_made = 0;

	*created = *changed = *deleted = 0;
	for (size_t i = 0; i < p->n; i++)
		n_made += creates_link(&p->ops[i]);
	if (n_made && (made = malloc(n_made * sizeof(*made)))) {
		n_made = 0;
		for (size_t i = 0; i < p->n; i++) {
			if (creates_link(&p->ops[i]))
				made[n_made++] = p->ops[i].ifname;
		}
		qsort(made, n_made, sizeof(*made), name_cmp);
	}
	for (size_t i = 0; i < p->n; i++) {
		switch ((enum op_verb)p->ops[i].verb) {
		case VERB_CREATE:
			(*created)++;
			break;
		case VERB_CHANGE:
			*changed += !of_a_made_link(&p->ops[i], made, n_made);
			break;
		case VERB_DELETE:
			(*deleted)++;
			break;
		}
	}
	free(made);
}
