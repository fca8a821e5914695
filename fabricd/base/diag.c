// SPDX-License-Identifier: GPL-2.0-or-later
/* base/diag.c - collected input problems. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/util.h"

void diag_init(struct diag *d)
{
	memset(d, 0, sizeof(*d));
}

static void free_list(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

void diag_free(struct diag *d)
{
	if (!d)
		return;
	free_list(d->msgs, d->n);
	free_list(d->warnings, d->n_warnings);
	diag_init(d);
}

static void append(char ***list, size_t *n, const char *path, const char *fmt, va_list ap)
{
	char msg[1024];
	char *line = NULL;
	char **grown;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (path && *path) {
		size_t len = strlen(path) + strlen(msg) + 3;

		line = malloc(len);
		if (line)
			snprintf(line, len, "%s: %s", path, msg);
	} else {
		line = strdup(msg);
	}
	if (!line)
		return;
	grown = realloc(*list, (*n + 1) * sizeof(**list));
	if (!grown) {
		free(line);
		return;
	}
	*list = grown;
	(*list)[(*n)++] = line;
}

void diag_add(struct diag *d, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	append(&d->msgs, &d->n, path, fmt, ap);
	va_end(ap);
}

void diag_warn(struct diag *d, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	append(&d->warnings, &d->n_warnings, path, fmt, ap);
	va_end(ap);
}

void diag_demote(struct diag *d, size_t from, const char *suffix)
{
	for (size_t i = from; i < d->n; i++) {
		diag_warn(d, NULL, "%s%s", d->msgs[i], suffix);
		free(d->msgs[i]);
	}
	if (from < d->n)
		d->n = from;
}

void diag_print(const struct diag *d, FILE *f)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(f, "error: %s\n", d->msgs[i]);
	for (size_t i = 0; i < d->n_warnings; i++)
		fprintf(f, "warning: %s\n", d->warnings[i]);
}

static bool said_before(const struct diag_said *s, uint64_t h)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->digests[i] == h)
			return true;
	return false;
}

void diag_print_new(const struct diag *d, bool errors, struct diag_said *said, FILE *f)
{
	struct diag_said now = {0};
	uint64_t rest = FNV1A_INIT;

	for (size_t i = 0; errors && i < d->n; i++)
		fprintf(f, "error: %s\n", d->msgs[i]);
	if (!said) {
		for (size_t i = 0; i < d->n_warnings; i++)
			fprintf(f, "warning: %s\n", d->warnings[i]);
		return;
	}
	for (size_t i = DIAG_SAID_MAX; i < d->n_warnings; i++)
		rest = fnv1a(rest, d->warnings[i], strlen(d->warnings[i]) + 1);
	now.rest = d->n_warnings > DIAG_SAID_MAX ? rest : 0;
	for (size_t i = 0; i < d->n_warnings; i++) {
		uint64_t h = fnv1a(FNV1A_INIT, d->warnings[i], strlen(d->warnings[i]) + 1);
		bool old = i < DIAG_SAID_MAX ? said_before(said, h) : said->rest == now.rest;

		if (i < DIAG_SAID_MAX)
			now.digests[now.n++] = h;
		if (!old)
			fprintf(f, "warning: %s\n", d->warnings[i]);
	}
	*said = now;
}
