// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/pve_sections.c - the two section-config dialects of Proxmox VE
 * (see pve_sections.h), list values and property strings.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "definition/pve_sections.h"

static char *dup_range(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

struct pve_section *pve_file_add_section(struct pve_file *f, const char *type, const char *id,
					 unsigned int line)
{
	struct pve_section *grown = realloc(f->sections, (f->n + 1) * sizeof(*grown));
	struct pve_section *s;

	if (!grown)
		return NULL;
	f->sections = grown;
	s = &f->sections[f->n];
	memset(s, 0, sizeof(*s));
	s->type = strdup(type);
	s->id = strdup(id);
	s->line = line;
	if (!s->type || !s->id) {
		free(s->type);
		free(s->id);
		return NULL;
	}
	f->n++;
	return s;
}

int pve_section_add(struct pve_section *s, const char *key, const char *value, unsigned int line)
{
	struct pve_kv *grown = realloc(s->kv, (s->n_kv + 1) * sizeof(*grown));
	struct pve_kv *kv;

	if (!grown)
		return -ENOMEM;
	s->kv = grown;
	kv = &s->kv[s->n_kv];
	kv->key = strdup(key);
	kv->value = value ? strdup(value) : NULL;
	kv->line = line;
	if (!kv->key || (value && !kv->value)) {
		free(kv->key);
		free(kv->value);
		return -ENOMEM;
	}
	s->n_kv++;
	return 0;
}

static void section_free(struct pve_section *s)
{
	for (size_t i = 0; i < s->n_kv; i++) {
		free(s->kv[i].key);
		free(s->kv[i].value);
	}
	free(s->kv);
	free(s->type);
	free(s->id);
}

void pve_file_free(struct pve_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		section_free(&f->sections[i]);
	free(f->sections);
	f->sections = NULL;
	f->n = 0;
}

static int by_id(const void *a, const void *b)
{
	return strcmp(((const struct pve_section *)a)->id, ((const struct pve_section *)b)->id);
}

void pve_file_sort(struct pve_file *f)
{
	if (f->n > 1)
		qsort(f->sections, f->n, sizeof(*f->sections), by_id);
}

void pve_file_wipe(struct pve_file *f)
{
	for (size_t i = 0; f && i < f->n; i++)
		for (size_t k = 0; k < f->sections[i].n_kv; k++)
			if (f->sections[i].kv[k].value)
				explicit_bzero(f->sections[i].kv[k].value,
					       strlen(f->sections[i].kv[k].value));
}

const struct pve_kv *pve_section_get(const struct pve_section *s, const char *key, size_t *count)
{
	const struct pve_kv *first = NULL;
	size_t n = 0;

	for (size_t i = 0; i < s->n_kv; i++) {
		if (strcmp(s->kv[i].key, key))
			continue;
		if (!first)
			first = &s->kv[i];
		n++;
	}
	if (count)
		*count = n;
	return first;
}

const char *pve_where(char *buf, const struct pve_file *f, const struct pve_section *s,
		      const char *key)
{
	char line[16] = "";
	unsigned int at = 0;

	if (s && key) {
		const struct pve_kv *kv = pve_section_get(s, key, NULL);

		at = kv ? kv->line : s->line;
	} else if (s) {
		at = s->line;
	}
	if (at)
		snprintf(line, sizeof(line), ":%u", at);
	if (!s)
		snprintf(buf, PVE_WHERE_LEN, "%s%s", f->name, line);
	else
		snprintf(buf, PVE_WHERE_LEN, "%s%s [%s: %s]%s%s", f->name, line, s->type, s->id,
			 key ? " " : "", key ? key : "");
	return buf;
}

/* One line of text without its end; trailing '\r' is not special to Proxmox either. */
struct line_ctx {
	struct pve_file *f;
	struct diag *diag;
	struct pve_section *cur; /* open section, NULL between sections */
	unsigned int no;
	int failed; /* RUST: first error rejects the file */
};

static void line_problem(struct line_ctx *c, const char *fmt, const char *arg)
{
	char where[PVE_WHERE_LEN], msg[256];

	snprintf(where, sizeof(where), "%s:%u", c->f->name, c->no);
	snprintf(msg, sizeof(msg), fmt, arg);
	if (c->f->dialect == PVE_DIALECT_PERL) {
		diag_warn(c->diag, where, "%s; line ignored, as Proxmox does", msg);
	} else {
		diag_add(c->diag, where, "%s; Proxmox rejects the whole file: fix this line", msg);
		c->failed = -EINVAL;
	}
}

static bool all_space(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)p[i]))
			return false;
	return true;
}

static size_t trim(const char **p, size_t n)
{
	while (n && isspace((unsigned char)**p)) {
		(*p)++;
		n--;
	}
	while (n && isspace((unsigned char)(*p)[n - 1]))
		n--;
	return n;
}

/* Perl: ^(\S+):\s*(\S+)\s*$   Rust: alphabetic first, split at the first ':' */
static int parse_header(struct line_ctx *c, const char *p, size_t n)
{
	const char *colon = memchr(p, ':', n);
	const char *t = p, *id;
	size_t tn, idn;
	char *type, *ident;
	int ret = 0;

	if (!colon)
		goto bad;
	tn = trim(&t, (size_t)(colon - p));
	id = colon + 1;
	idn = trim(&id, n - (size_t)(id - p));
	if (!tn || !idn || (c->f->dialect == PVE_DIALECT_RUST && !isalpha((unsigned char)*p)))
		goto bad;
	if (c->f->dialect == PVE_DIALECT_PERL) {
		for (size_t i = 0; i < tn; i++)
			if (isspace((unsigned char)t[i]))
				goto bad;
		for (size_t i = 0; i < idn; i++)
			if (isspace((unsigned char)id[i]))
				goto bad;
	}
	type = dup_range(t, tn);
	ident = dup_range(id, idn);
	c->cur = type && ident ? pve_file_add_section(c->f, type, ident, c->no) : NULL;
	if (!c->cur)
		ret = -ENOMEM;
	free(type);
	free(ident);
	return ret;
bad:
	/* a RUST file may be priv/wg-keys.cfg: never quote its lines */
	type = c->f->dialect == PVE_DIALECT_PERL ? dup_range(p, n < 80 ? n : 80) : strdup("line");
	if (!type)
		return -ENOMEM;
	line_problem(c, "\"%s\" is not a section header \"type: id\"", type);
	free(type);
	return 0;
}

/* Perl: ^\s+(\S+)(\s+(.*\S))?\s*$ ; Rust additionally needs a value */
static int parse_body(struct line_ctx *c, const char *p, size_t n)
{
	const char *k = p, *v;
	size_t kn = trim(&k, n), keylen = 0, vn;
	char *key, *value = NULL;
	int ret;

	while (keylen < kn && !isspace((unsigned char)k[keylen]))
		keylen++;
	v = k + keylen;
	vn = trim(&v, kn - keylen);
	key = dup_range(k, keylen);
	if (!key)
		return -ENOMEM;
	if (vn == 0 && c->f->dialect == PVE_DIALECT_RUST) {
		line_problem(c, "key \"%s\" has no value", key);
		free(key);
		return 0;
	}
	if (vn && !(value = dup_range(v, vn))) {
		free(key);
		return -ENOMEM;
	}
	ret = pve_section_add(c->cur, key, value, c->no);
	free(key);
	free(value);
	return ret;
}

static int parse_line(struct line_ctx *c, const char *p, size_t n)
{
	const char *q = p;
	size_t qn = trim(&q, n);

	if (qn && *q == '#') {
		if (c->f->dialect == PVE_DIALECT_PERL)
			return 0;
		line_problem(c, "%sa comment line (this file has no comments)", "");
		return 0;
	}
	/*
	 * Perl's SectionConfig ends a section only at an empty line: a line of
	 * whitespace, a lone CR or what looks like the next header before such a
	 * line is one it ignores, and so is that header's section.
	 */
	if (!qn && n && c->cur && c->f->dialect == PVE_DIALECT_PERL) {
		line_problem(
		    c, "a line of only whitespace%s does not end a section (an empty line does)",
		    memchr(p, '\r', n) ? " (a CR: Windows line ends)" : "");
		return 0;
	}
	if (!qn) {
		c->cur = NULL;
		return 0;
	}
	if (!isspace((unsigned char)*p) && c->cur && c->f->dialect == PVE_DIALECT_PERL) {
		char *line = dup_range(p, n < 80 ? n : 80);

		if (!line)
			return -ENOMEM;
		line_problem(
		    c, "\"%s\" follows a section without an empty line before it: no header", line);
		free(line);
		return 0;
	}
	if (!isspace((unsigned char)*p))
		return parse_header(c, p, n);
	if (!c->cur) {
		line_problem(c, "%sindented line outside a section", "");
		return 0;
	}
	return parse_body(c, p, n);
}

/* Perl keeps the last section of an id (a hash of ids): the earlier ones go, reported. */
static void drop_redefined(struct pve_file *f, struct diag *diag)
{
	char where[PVE_WHERE_LEN];
	size_t out = 0;

	for (size_t i = 0; i < f->n; i++) {
		size_t j = i + 1;

		while (j < f->n && strcmp(f->sections[j].id, f->sections[i].id))
			j++;
		if (j < f->n) {
			diag_warn(diag, pve_where(where, f, &f->sections[i], NULL),
				  "section id defined again at line %u; Proxmox keeps the last, "
				  "and so does fabricd",
				  f->sections[j].line);
			section_free(&f->sections[i]);
			continue;
		}
		f->sections[out++] = f->sections[i];
	}
	f->n = out;
}

int pve_file_parse(struct pve_file *f, const char *text, size_t len, struct diag *diag)
{
	struct line_ctx c = {.f = f, .diag = diag};
	const char *p = text, *end = text + len;
	int ret = 0;

	while (p < end && ret == 0 && !c.failed) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		c.no++;
		if (memchr(p, '\0', n))
			line_problem(&c, "%scontains a NUL byte", "");
		else if (!all_space(p, n) || c.cur)
			ret = parse_line(&c, p, n);
		p += n + 1;
	}
	if (ret == 0 && c.failed)
		ret = c.failed;
	if (ret == 0 && f->dialect == PVE_DIALECT_PERL)
		drop_redefined(f, diag);
	if (ret < 0)
		pve_file_free(f);
	return ret;
}

int pve_parse_bool(enum pve_dialect d, const char *value, bool *out)
{
	static const char *const yes[] = {"1", "on", "yes", "true"};
	static const char *const no[] = {"0", "off", "no", "false"};

	if (!value) {
		if (d != PVE_DIALECT_PERL)
			return -EINVAL;
		*out = true;
		return 0;
	}
	if (d == PVE_DIALECT_PERL) {
		if (strcmp(value, "1") && strcmp(value, "0"))
			return -EINVAL;
		*out = value[0] == '1';
		return 0;
	}
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(value, yes[i]) || !strcasecmp(value, no[i])) {
			*out = !strcasecmp(value, yes[i]);
			return 0;
		}
	}
	return -EINVAL;
}

void pve_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static bool list_sep(char ch)
{
	return ch == ',' || ch == ';' || isspace((unsigned char)ch);
}

int pve_split_list(const char *value, char ***items)
{
	char **v = calloc(1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (const char *p = value ? value : ""; *p;) {
		size_t len = 0;
		char **grown;

		while (*p && list_sep(*p))
			p++;
		while (p[len] && !list_sep(p[len]))
			len++;
		if (!len)
			break;
		grown = realloc(v, (n + 2) * sizeof(*v));
		if (!grown || !(grown[n] = dup_range(p, len))) {
			v = grown ? grown : v;
			v[n] = NULL;
			pve_strv_free(v);
			return -ENOMEM;
		}
		v = grown;
		v[++n] = NULL;
		p += len;
	}
	*items = v;
	return (int)n;
}

void pve_props_free(struct pve_props *p)
{
	for (size_t i = 0; p && i < p->n; i++) {
		free(p->kv[i].key);
		free(p->kv[i].value);
	}
	if (p) {
		free(p->kv);
		p->kv = NULL;
		p->n = 0;
	}
}

/* Reads one value at *pp (quoted or bare) into a new string; advances past it. */
static int props_value(const char **pp, char **out, char *err, size_t errlen)
{
	const char *p = *pp;
	size_t cap = strlen(p) + 1, n = 0;
	char *v = malloc(cap);

	if (!v)
		return -ENOMEM;
	if (*p != '"') {
		while (*p && *p != ',')
			v[n++] = *p++;
	} else {
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\') {
				p++;
				if (*p != '"' && *p != '\\' && *p != 'n')
					goto bad_escape;
				v[n++] = *p == 'n' ? '\n' : *p;
			} else {
				v[n++] = *p;
			}
		}
		if (*p != '"') {
			snprintf(err, errlen, "unterminated quoted value");
			free(v);
			return -EINVAL;
		}
		p++;
		if (*p && *p != ',') {
			snprintf(err, errlen, "text after a quoted value");
			free(v);
			return -EINVAL;
		}
	}
	v[n] = '\0';
	*out = v;
	*pp = p;
	return 0;
bad_escape:
	snprintf(err, errlen, "unknown escape in a quoted value (only \\\" \\\\ \\n)");
	free(v);
	return -EINVAL;
}

static int props_add(struct pve_props *out, char *key, char *value)
{
	struct pve_kv *grown = realloc(out->kv, (out->n + 1) * sizeof(*grown));

	if (!grown) {
		free(key);
		free(value);
		return -ENOMEM;
	}
	out->kv = grown;
	out->kv[out->n++] = (struct pve_kv){.key = key, .value = value};
	return 0;
}

int pve_props_parse(const char *text, struct pve_props *out, char *err, size_t errlen)
{
	const char *p = text;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	while (*p && ret == 0) {
		const char *eq = strchr(p, '=');
		size_t kn = strcspn(p, "=,");
		char *key, *value = NULL;

		if (!eq || (size_t)(eq - p) != kn || kn == 0) {
			snprintf(err, errlen, "\"%.*s\" is not key=value", (int)strcspn(p, ","), p);
			ret = -EINVAL;
			break;
		}
		if (!(key = dup_range(p, kn))) {
			ret = -ENOMEM;
			break;
		}
		if (pve_props_get(out, key)) {
			snprintf(err, errlen, "key \"%s\" given twice", key);
			free(key);
			ret = -EINVAL;
			break;
		}
		p = eq + 1;
		ret = props_value(&p, &value, err, errlen);
		if (ret < 0) {
			free(key);
			break;
		}
		ret = props_add(out, key, value);
		if (*p == ',')
			p++;
	}
	if (ret < 0)
		pve_props_free(out);
	return ret;
}

const char *pve_props_get(const struct pve_props *p, const char *key)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->kv[i].key, key))
			return p->kv[i].value;
	return NULL;
}

void pve_warn_vlanaware(struct diag *d, const char *where, const char *zone)
{
	diag_warn(d, where,
		  "vlanaware: zone %s carries it untagged (fabricd's VXLAN port is a plain port "
		  "of the bridge, default PVID), so frames its guests tag with a VLAN do not "
		  "reach the other nodes; make a vnet per VLAN and clear vlanaware in Proxmox, "
		  "or keep the VLANs on one node",
		  zone);
}
