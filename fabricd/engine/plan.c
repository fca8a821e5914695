// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/plan.c - the op list: building, printing, counting. */
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
	for (size_t i = 0; i < *n; i++)
		free((*ops)[i].text);
	if (*ops)
		explicit_bzero(*ops, *cap * sizeof(**ops));
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

/* A zeroed op at the end of the array, or NULL on ENOMEM. */
static struct op *ops_push(struct op **ops, size_t *n, size_t *cap)
{
	struct op *op;

	if (*n == *cap) {
		size_t grown_cap = *cap ? *cap * 2 : 32;
		struct op *grown = calloc(grown_cap, sizeof(*grown));

		if (!grown)
			return NULL;
		/* copy, then wipe the old array: ops may hold a private key */
		if (*ops) {
			memcpy(grown, *ops, *n * sizeof(*grown));
			explicit_bzero(*ops, *cap * sizeof(**ops));
			free(*ops);
		}
		*ops = grown;
		*cap = grown_cap;
	}
	op = &(*ops)[(*n)++];
	memset(op, 0, sizeof(*op));
	return op;
}

struct op *plan_add(struct plan *p, enum op_type type, enum op_phase phase, enum op_verb verb,
		    const char *object_fmt, ...)
{
	struct op *op = ops_push(&p->ops, &p->n, &p->cap);
	va_list ap;

	if (!op)
		return NULL;
	op->type = type;
	op->phase = phase;
	op->verb = verb;
	va_start(ap, object_fmt);
	vsnprintf(op->object, sizeof(op->object), object_fmt, ap);
	va_end(ap);
	return op;
}

struct op *plan_add_later(struct plan *p, long long due, long long due_in, enum op_type type,
			  enum op_verb verb, const char *object_fmt, ...)
{
	struct op *op = ops_push(&p->later, &p->n_later, &p->cap_later);
	va_list ap;

	if (!op)
		return NULL;
	op->type = type;
	op->phase = PHASE_RETIRE;
	op->verb = verb;
	op->due = due;
	op->due_in = due_in;
	va_start(ap, object_fmt);
	vsnprintf(op->object, sizeof(op->object), object_fmt, ap);
	va_end(ap);
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

void op_detail(struct op *op, const char *fmt, ...)
{
	size_t len = strlen(op->detail);
	va_list ap;

	if (len && len + 2 < sizeof(op->detail)) {
		strcpy(op->detail + len, ", ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(op->detail + len, sizeof(op->detail) - len, fmt, ap);
	va_end(ap);
}

const char *op_verb_word(enum op_verb v)
{
	return v == VERB_CREATE ? "create" : v == VERB_DELETE ? "remove" : "change";
}

static void print_op(const struct op *op, FILE *f)
{
	fprintf(f, "%c %s: %s%s%s%s\n", (char)op->verb, op->object, op_verb_word(op->verb),
		op->detail[0] ? " (" : "", op->detail, op->detail[0] ? ")" : "");
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
		switch (p->ops[i].verb) {
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
