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

void plan_free(struct plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->ops[i].text);
	if (p->ops)
		explicit_bzero(p->ops, p->cap * sizeof(*p->ops));
	free(p->ops);
	p->ops = NULL;
	p->n = p->cap = 0;
}

struct op *plan_add(struct plan *p, enum op_type type, enum op_phase phase, enum op_verb verb,
		    const char *object_fmt, ...)
{
	struct op *op;
	va_list ap;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		struct op *grown = calloc(cap, sizeof(*grown));

		if (!grown)
			return NULL;
		/* copy, then wipe the old array: ops may hold a private key */
		if (p->ops) {
			memcpy(grown, p->ops, p->n * sizeof(*grown));
			explicit_bzero(p->ops, p->cap * sizeof(*p->ops));
			free(p->ops);
		}
		p->ops = grown;
		p->cap = cap;
	}
	op = &p->ops[p->n++];
	memset(op, 0, sizeof(*op));
	op->type = type;
	op->phase = phase;
	op->verb = verb;
	va_start(ap, object_fmt);
	vsnprintf(op->object, sizeof(op->object), object_fmt, ap);
	va_end(ap);
	return op;
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

static const char *verb_word(enum op_verb v)
{
	return v == VERB_CREATE ? "create" : v == VERB_DELETE ? "remove" : "change";
}

void plan_print(const struct plan *p, FILE *f)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];

		fprintf(f, "%c %s: %s%s%s%s\n", (char)op->verb, op->object, verb_word(op->verb),
			op->detail[0] ? " (" : "", op->detail, op->detail[0] ? ")" : "");
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
