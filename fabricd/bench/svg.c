// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * svg.c - the bench chart: throughput bars and CPU-per-GB bars, one
 * group per stream count, one bar per path, whiskers from min to max.
 * Plain SVG 1.1 text, no scripts, so any browser or XML parser reads it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "bench/bench.h"

#define SVG_W	   880
#define SVG_H	   640
#define PLOT_X0	   80
#define PLOT_X1	   860
#define PANEL_H	   200
#define PANEL1_TOP 100
#define PANEL2_TOP 370

static const char *const colors[BENCH_N_PATHS] = {"#9e9e9e", "#3b7dd8", "#d9822b"};
static const char *const legend[BENCH_N_PATHS] = {"raw underlay", "plain VXLAN",
						  "VXLAN in WireGuard"};

/* The smallest 1, 2, 2.5 or 5 times a power of ten at or above v (no libm needed). */
static double nice_ceil(double v)
{
	static const double steps[] = {1, 2, 2.5, 5, 10};
	double p = 1;

	if (!(v > 0))
		return 1;
	while (p * 10 <= v)
		p *= 10;
	while (p > v)
		p /= 10;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i] * p >= v)
			return steps[i] * p;
	}
	return 10 * p;
}

/* Text content or attribute value with the XML specials escaped. */
static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static const struct bench_stat *metric(const struct bench_summary *x, int which)
{
	return which == 0 ? &x->gbps : &x->cpu_per_gb;
}

static void panel(const struct bench_results *r, const struct bench_summary *s, int which, int top,
		  const char *title, const char *fmt, FILE *f)
{
	double max = 0, ymax, plot_w = PLOT_X1 - PLOT_X0, gw, bw;
	int bottom = top + PANEL_H;

	for (size_t i = 0; i < r->n_cells; i++) {
		const struct bench_stat *st = metric(&s[i], which);

		if (st->n && st->max > max)
			max = st->max;
	}
	ymax = nice_ceil(max * 1.08);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"h\">", PLOT_X0, top - 14);
	esc(f, title);
	fputs("</text>\n", f);
	for (int t = 0; t <= 4; t++) {
		double v = ymax * t / 4;
		double y = bottom - (double)PANEL_H * t / 4;

		fprintf(f,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"%s\"/>\n"
			"<text x=\"%d\" y=\"%.1f\" class=\"yl\">%g</text>\n",
			PLOT_X0, y, PLOT_X1, y, t ? "g" : "ax", PLOT_X0 - 6, y + 4, v);
	}
	gw = plot_w / (double)(r->n_streams ? r->n_streams : 1);
	bw = gw * 0.8 / BENCH_N_PATHS;
	for (size_t si = 0; si < r->n_streams; si++) {
		double gx = PLOT_X0 + gw * (double)si;

		fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"xl\">%u stream%s</text>\n",
			gx + gw / 2, bottom + 18, r->streams[si], r->streams[si] == 1 ? "" : "s");
		for (int p = 0; p < BENCH_N_PATHS; p++) {
			const struct bench_summary *x = &s[bench_cell_index(si, p)];
			const struct bench_stat *st = metric(x, which);
			double bx = gx + gw * 0.1 + bw * p, h, y;
			char label[32];

			if (!st->n)
				continue;
			h = (double)PANEL_H * st->median / ymax;
			y = bottom - h;
			fprintf(f,
				"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"><title>%s, %u stream%s: %g</title></rect>\n",
				bx + 2, y, bw - 4, h, colors[p], legend[p], x->streams,
				x->streams == 1 ? "" : "s", st->median);
			if (st->n > 1 && st->max > st->min) {
				double cx = bx + bw / 2;
				double y0 = bottom - (double)PANEL_H * st->min / ymax;
				double y1 = bottom - (double)PANEL_H * st->max / ymax;

				fprintf(f,
					"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
					"class=\"w\"/>\n",
					cx, y0, cx, y1);
			}
			snprintf(label, sizeof(label), fmt, st->median);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"v\">%s</text>\n",
				bx + bw / 2, y - 4, label);
		}
	}
}

int bench_write_svg(const struct bench_results *r, const struct bench_summary *s, FILE *f)
{
	char sub[256];

	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\">\n"
		"<style>text{font-family:sans-serif;font-size:12px;fill:#222}"
		".t{font-size:17px;font-weight:bold}.h{font-size:14px;font-weight:bold}"
		".yl{text-anchor:end;font-size:11px}.xl{text-anchor:middle}"
		".v{text-anchor:middle;font-size:10px}.g{stroke:#ddd}.ax{stroke:#444}"
		".w{stroke:#222;stroke-width:1.5}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		SVG_W, SVG_H, SVG_W, SVG_H);
	fputs("<text x=\"20\" y=\"30\" class=\"t\">fabricd bench: what secure transport "
	      "costs</text>\n",
	      f);
	snprintf(sub, sizeof(sub),
		 "WireGuard: %s backend (%s), %u CPUs, %u s x %u run%s per bar: medians, "
		 "whiskers min to max",
		 r->backend, r->implementation, r->n_cpu, r->duration, r->repeat,
		 r->repeat == 1 ? "" : "s");
	fputs("<text x=\"20\" y=\"52\">", f);
	esc(f, sub);
	fputs("</text>\n", f);
	panel(r, s, 0, PANEL1_TOP, "Throughput, Gbit/s (higher is better)", "%.2f", f);
	panel(r, s, 1, PANEL2_TOP, "Host CPU seconds per GB moved (lower is better)", "%.3f", f);
	for (int p = 0; p < BENCH_N_PATHS; p++) {
		int x = PLOT_X0 + 160 * p;

		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">%s</text>\n",
			x, SVG_H - 40, colors[p], x + 20, SVG_H - 28, legend[p]);
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
