/* fit — the link fit and the tiering-kernel prediction of calibrate (see calibrate.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/engine.h"
#include "../sim/step.h"
#include "calibrate.h"

/* The largest fixed time per matrix kernel the GEMM fit believes: XLA's H100 and B200 timings
 * give 6-7 us (STEP_MATMUL_FIXED); anything far above is noise in a small timing [U: a bound]. */
#define GEMM_FIXED_MAX 50e-6

int cal_fit_gemm(const double flops[2], const double rate[2], int kernels, double *r, double *fixed)
{
	double t0 = flops[0] / rate[0];
	if (flops[1] > 0 && rate[1] > 0 && flops[1] < flops[0] && kernels > 0) {
		double t1 = flops[1] / rate[1];
		double R = (flops[0] - flops[1]) / (t0 - t1);
		double f = (t0 - flops[0] / R) / kernels;
		if (R > 0 && f > 0 && f <= GEMM_FIXED_MAX) {
			*r = R;
			*fixed = f;
			return 0;
		}
	}
	*fixed = STEP_MATMUL_FIXED;
	double net = t0 - kernels * STEP_MATMUL_FIXED;
	*r = net > 0 ? flops[0] / net : rate[0];
	return 1;
}

void cal_fit_link(const double *size, const double *t, int n, double *latency, double *bandwidth,
		  double *r2)
{
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int i = 0; i < n; i++) {
		double x = size[i], y = t[i], w = 1 / (y * y);
		sw += w;
		sx += w * x;
		sy += w * y;
		sxx += w * x * x;
		sxy += w * x * y;
	}
	double den = sw * sxx - sx * sx;
	if (n < 2 || !(den > 0))
		return;
	double slope = (sw * sxy - sx * sy) / den, icept = (sy - slope * sx) / sw;
	*bandwidth = slope > 0 ? 1 / slope : 0;
	*latency = fmax(icept, 0);
	double ss = 0, st = 0, mean = sy / sw;
	for (int i = 0; i < n; i++) {
		double y = t[i], w = 1 / (y * y), f = icept + slope * size[i];
		ss += w * (y - f) * (y - f);
		st += w * (y - mean) * (y - mean);
	}
	*r2 = st > 0 ? 1 - ss / st : 1;
}

int cal_fit_l2(const double *size, const double *t, int n, double *fixed, double *bw,
	       double *cache)
{
	double a = 0, b = 0, r2 = 0;
	int k = 3;
	if (n < 4)
		return 1;
	cal_fit_link(size, t, k, &a, &b, &r2);
	while (k < n && b > 0 && size[k] / t[k] >= CAL_L2_KNEE * size[k] / (a + size[k] / b))
		cal_fit_link(size, t, ++k, &a, &b, &r2);
	if (k == n || !(b > 0))
		return 1;
	*fixed = a;
	*bw = b;
	*cache = size[k - 1];
	return 0;
}

double cal_predict_tiering(int layers, double bytes, double flops, double h2d_bw, double h2d_lat,
			   double gemm_flops, double gemm_fixed)
{
	if (layers < 1 || !(bytes > 0) || !(flops > 0) || !(h2d_bw > 0) || !(gemm_flops > 0))
		return 0;
	struct eng *e = eng_new();
	struct eng_stats st;
	if (!e)
		return 0;
	int link = eng_resource(e, "pcie h2d", h2d_bw, "B");
	int sm = eng_resource(e, "tensor cores", gemm_flops, "FLOP");
	int cs = eng_stream(e, "compute"), xs = eng_stream(e, "copy");
	int prev2 = -1, prev1 = -1, q = layers / 4, g0 = -1, g1 = -1;
	for (int i = 0; i < layers; i++) {
		int c = eng_task(e, "copy", xs, bytes, (uint64_t)llround(h2d_lat * 1e9), 1, &link, NULL);
		int g = eng_task(e, "gemm", cs, flops, (uint64_t)llround(gemm_fixed * 1e9), 1, &sm,
				 NULL);
		eng_dep(e, c, g);
		if (prev2 >= 0)
			eng_dep(e, prev2, c); /* double buffer: the buffer of layer i-2 is free */
		prev2 = prev1;
		prev1 = g;
		if (i == q - 1)
			g0 = g;
		if (i == layers - q - 1)
			g1 = g;
	}
	double per = 0;
	if (eng_run(e, &st) == 0) {
		/* the steady state the helper times: between the GEMMs ending layers q - 1 and
		 * L - q - 1 (the whole loop when it is too short to have one) */
		per = q >= 1 && g1 > g0 && g0 >= 0
			      ? (double)(eng_task_at(e, g1)->t_end - eng_task_at(e, g0)->t_end) * 1e-9 /
					(layers - 2 * q)
			      : st.end_ns * 1e-9 / layers;
	}
	eng_free(e);
	return per;
}

/* A write stream's drop past a drive's SLC cache: below this share of its opening rate for
 * SLC_DROP_RUN samples in a row [U: a detection threshold, not a model constant: TechPowerUp's
 * fill curves fall to 0.2-0.5 of their opening rate, and a queue's jitter stays within 0.8] */
#define SLC_DROP_SHARE 0.6
#define SLC_DROP_RUN 3

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n), n at most 4096 (a log's samples). */
static double median_of(const double *v, int n)
{
	double w[4096];
	if (n > 4096)
		n = 4096;
	memcpy(w, v, (size_t)n * sizeof *w);
	qsort(w, (size_t)n, sizeof *w, cmp_double);
	return n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
}

int cal_fit_slc(const double *t, const double *bw, int n, double *cache, double *after)
{
	if (n < CAL_SLC_MIN_SAMPLES || CAL_SLC_MIN_SAMPLES < 2 * SLC_DROP_RUN)
		return 1;
	int head = n / 10 > SLC_DROP_RUN ? n / 10 : SLC_DROP_RUN;
	double fast = median_of(bw, head), bytes = 0;
	for (int i = 0; i + SLC_DROP_RUN <= n; i++) {
		int k = 0;
		while (k < SLC_DROP_RUN && bw[i + k] < SLC_DROP_SHARE * fast)
			k++;
		if (k == SLC_DROP_RUN && i > 0) {
			*cache = bytes;
			*after = median_of(bw + i, n - i);
			return 0;
		}
		bytes += bw[i] * (t[i] - (i ? t[i - 1] : 0));
	}
	return 1;
}
