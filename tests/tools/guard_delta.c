// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guard_delta - sends the guard delta text on stdin in the current network
 * namespace, for tests/integration/test_guard_delta.py: "send" through
 * engine/guard_delta.c alone (prints "rc=N" and the kernel's words), "load"
 * the same for a new table's chunk (firewall_load_send: lines without the
 * delta's mark, as firewall_load_steps writes them), "apply"
 * as an op through firewall_apply (netlink, then libnftables for what it
 * leaves or the kernel refused; prints "rc=N", the log on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "engine/guard_io.h"
#include "engine/plan.h"
#include "kinds/kind.h"

static char *read_all(FILE *f)
{
	size_t len = 0, cap = 4096;
	char *s = malloc(cap);
	size_t got;

	while (s && (got = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			char *grown = realloc(s, cap *= 2);

			if (!grown)
				free(s);
			s = grown;
		}
	}
	if (s)
		s[len] = '\0';
	return s;
}

int main(int argc, char **argv)
{
	char err[1024] = "";
	char *text = read_all(stdin);
	int ret;

	if (argc != 2 || !text ||
	    (strcmp(argv[1], "send") && strcmp(argv[1], "load") && strcmp(argv[1], "apply"))) {
		fprintf(stderr, "usage: guard_delta send|load|apply < delta\n");
		free(text);
		return 2;
	}
	log_set_verbose(true);
	if (!strcmp(argv[1], "send")) {
		ret = firewall_delta_send(text, err, sizeof(err));
		printf("rc=%d %s\n", ret, err);
	} else if (!strcmp(argv[1], "load")) {
		ret = firewall_load_send(text, err, sizeof(err));
		printf("rc=%d %s\n", ret, err);
	} else {
		struct plan p;
		struct op *op;

		plan_init(&p, "fabricd:test");
		op = plan_add(&p, KIND_GUARD, OP_FIREWALL_SET, PHASE_GUARD, VERB_CHANGE, NULL);
		op->text = text;
		text = NULL;
		ret = firewall_apply(op);
		printf("rc=%d\n", ret);
		plan_free(&p);
	}
	free(text);
	return 0;
}
