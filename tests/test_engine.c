/* test_engine — the discrete-event engine: ordering, determinism, max-min sharing, streams,
 * memory and power accounting, conservation. Expected values are solved by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/engine.h"
#include "tests.h"

#define NS 1e9

/* One 1 GB transfer on a 10 GB/s link takes latency + 0.1 s. */
static void single_transfer_takes_latency_plus_bytes_over_bandwidth(void)
{
	struct eng *e = eng_new();
	struct eng_stats st;
	int link = eng_resource(e, "link", 10e9, "B");
	int t = eng_task(e, "copy", -1, 1e9, 5000, 1, &link, NULL);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
	CU_ASSERT_EQUAL(eng_task_at(e, t)->t_end, 100000000ull + 5000);
	CU_ASSERT_EQUAL(st.end_ns, 100005000ull);
	ASSERT_NEAR_REL(eng_resource_at(e, link)->work, 1e9, 1e-9);
	ASSERT_NEAR_REL(eng_resource_at(e, link)->busy_ns, 1e8, 1e-9);
	eng_free(e);
}

/*
 * Max-min fairness, solved by hand. Links A (10/s) and B (4/s); flows of 12 units: f1 on A, f2
 * on A+B, f3 on B. B is the bottleneck: f2 = f3 = 2/s; A gives f1 the rest, 8/s, so f1 ends at
 * 1.5 s. A's spare capacity cannot help f2, still held to 2/s by B: f2 and f3 end at 6 s.
 */
static void max_min_sharing_matches_hand_solution(void)
{
	struct eng *e = eng_new();
	struct eng_stats st;
	int a = eng_resource(e, "A", 10, "B"), b = eng_resource(e, "B", 4, "B");
	int ab[2] = {a, b};
	int f1 = eng_task(e, "f1", -1, 12, 0, 1, &a, NULL);
	int f2 = eng_task(e, "f2", -1, 12, 0, 2, ab, NULL);
	int f3 = eng_task(e, "f3", -1, 12, 0, 1, &b, NULL);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
	CU_ASSERT_EQUAL(eng_task_at(e, f1)->t_end, (uint64_t)(1.5 * NS));
	CU_ASSERT_EQUAL(eng_task_at(e, f2)->t_end, (uint64_t)(6 * NS));
	CU_ASSERT_EQUAL(eng_task_at(e, f3)->t_end, (uint64_t)(6 * NS));
	eng_free(e);
}

/*
 * A resource shared by flows limited elsewhere binds only when their tops exceed it. Links A
 * (10/s) and B (6/s) both cross hub H; f1 moves 20 units over A+H, f2 12 over B+H. With H at
 * 20/s the tops (10 + 6) fit: each runs at its link's rate and both end at 2 s. With H at 14/s
 * the rate rises for both to 6, where B is full (f2 fixed); f1 rises on to H's remaining 8 (A
 * has room for 10). f2 ends at 12 / 6 = 2 s, when f1 has 4 left, now alone on H at A's 10/s:
 * 0.4 s more, 2.4 s.
 */
static void a_shared_resource_binds_only_when_tops_exceed_it(void)
{
	for (int tight = 0; tight < 2; tight++) {
		struct eng *e = eng_new();
		struct eng_stats st;
		int a = eng_resource(e, "A", 10, "B"), b = eng_resource(e, "B", 6, "B");
		int h = eng_resource(e, "H", tight ? 14 : 20, "B");
		int ah[2] = {a, h}, bh[2] = {b, h};
		int f1 = eng_task(e, "f1", -1, 20, 0, 2, ah, NULL);
		int f2 = eng_task(e, "f2", -1, 12, 0, 2, bh, NULL);
		CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
		CU_ASSERT_EQUAL(eng_task_at(e, f1)->t_end, (uint64_t)((tight ? 2.4 : 2) * NS));
		CU_ASSERT_EQUAL(eng_task_at(e, f2)->t_end, (uint64_t)(2 * NS));
		ASSERT_NEAR_REL(eng_resource_at(e, h)->work, 32, 1e-9);
		eng_free(e);
	}
}

/*
 * Rates change when a flow ends: two 10-unit flows on a 2/s link run at 1 each; a third flow of
 * 30 on the same link joins at t=0 too. All at 2/3: the 10s end at 15 s, the 30 has 20 left and
 * runs alone at 2: ends at 25 s, and so does the run (its first completion, at 45 s for 2/3,
 * was superseded and is no event).
 */
static void rates_are_recomputed_when_flows_end(void)
{
	struct eng *e = eng_new();
	struct eng_stats st;
	int l = eng_resource(e, "l", 2, "B");
	int x = eng_task(e, "x", -1, 10, 0, 1, &l, NULL);
	int y = eng_task(e, "y", -1, 10, 0, 1, &l, NULL);
	int z = eng_task(e, "z", -1, 30, 0, 1, &l, NULL);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
	CU_ASSERT_EQUAL(eng_task_at(e, x)->t_end, (uint64_t)(15 * NS));
	CU_ASSERT_EQUAL(eng_task_at(e, y)->t_end, (uint64_t)(15 * NS));
	CU_ASSERT_EQUAL(eng_task_at(e, z)->t_end, (uint64_t)(25 * NS));
	CU_ASSERT_EQUAL(st.end_ns, (uint64_t)(25 * NS));
	ASSERT_NEAR_REL(eng_resource_at(e, l)->work, 50, 1e-9);
	eng_free(e);
}

/* A path with a scale: CPU AdamW at 1e9 params/s touching 28 B/param of a 14 GB/s DRAM is
 * DRAM bound at 0.5e9 params/s. */
static void scaled_paths_bind_on_the_tighter_resource(void)
{
	struct eng *e = eng_new();
	struct eng_stats st;
	int cpu = eng_resource(e, "cpu", 1e9, "param"), dram = eng_resource(e, "dram", 14e9, "B");
	int path[2] = {cpu, dram};
	float sc[2] = {1, 28};
	eng_task(e, "adam", -1, 1e9, 0, 2, path, sc);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
	CU_ASSERT_EQUAL(st.end_ns, (uint64_t)(2 * NS));
	ASSERT_NEAR_REL(eng_resource_at(e, dram)->work, 28e9, 1e-9);
	eng_free(e);
}

/* Streams run in submission order even when a later task is ready first; dependencies across
 * streams hold. */
static void streams_are_in_order_and_dependencies_hold(void)
{
	struct eng *e = eng_new();
	struct eng_stats st;
	int gpu = eng_resource(e, "gpu", 1, "FLOP"), pcie = eng_resource(e, "pcie", 1, "B");
	int cs = eng_stream(e, "compute"), xs = eng_stream(e, "copy");
	int load = eng_task(e, "load", xs, 3, 0, 1, &pcie, NULL);
	int c1 = eng_task(e, "c1", cs, 2, 0, 1, &gpu, NULL);
	int c2 = eng_task(e, "c2", cs, 1, 0, 1, &gpu, NULL);
	eng_dep(e, load, c1);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
	/* c2 waits behind c1 on its stream although it has no dependency */
	CU_ASSERT_EQUAL(eng_task_at(e, c1)->t_start, (uint64_t)(3 * NS));
	CU_ASSERT_EQUAL(eng_task_at(e, c2)->t_start, (uint64_t)(5 * NS));
	CU_ASSERT_EQUAL(st.end_ns, (uint64_t)(6 * NS));
	eng_free(e);
}

/* Ties are broken FIFO and two runs of the same graph agree to the nanosecond and the event. */
static void runs_are_deterministic(void)
{
	uint64_t ends[2][40], events[2];
	for (int run = 0; run < 2; run++) {
		struct eng *e = eng_new();
		struct eng_stats st;
		int r[3] = {eng_resource(e, "a", 3, "B"), eng_resource(e, "b", 5, "B"),
			    eng_resource(e, "c", 7, "B")};
		int s = eng_stream(e, "s");
		for (int i = 0; i < 40; i++) {
			int path[2] = {r[i % 3], r[(i + 1) % 3]};
			int t = eng_task(e, "t", i % 4 == 0 ? s : -1, 1 + i % 7, (uint64_t)(i % 5) * 10,
					 2, path, NULL);
			if (i >= 3)
				eng_dep(e, t - 3, t);
		}
		CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
		for (int i = 0; i < 40; i++)
			ends[run][i] = eng_task_at(e, i)->t_end;
		events[run] = st.events;
		eng_free(e);
	}
	CU_ASSERT_EQUAL(memcmp(ends[0], ends[1], sizeof ends[0]), 0);
	CU_ASSERT_EQUAL(events[0], events[1]);
}

/* Two 1 s tasks in a row on one stream over a 1 B/s resource, a then b, and a pool of 100 B at
 * `scale`: their ids in *a, *b, the pool's in *hbm. */
static struct eng *two_tasks_and_a_pool(double scale, int *a, int *b, int *hbm)
{
	struct eng *e = eng_new();
	int l = eng_resource(e, "l", 1, "B");
	int s = eng_stream(e, "s");
	*hbm = eng_pool(e, "hbm", 100, scale);
	*a = eng_task(e, "a", s, 1, 0, 1, &l, NULL);
	*b = eng_task(e, "b", s, 1, 0, 1, &l, NULL);
	return e;
}

/* Pools: allocated at start, freed at end, peaks and history; a completion frees before a start
 * at the same instant allocates. */
static void pools_record_peaks_and_free_before_alloc(void)
{
	struct eng_stats st;
	int a, b, hbm;
	struct eng *e = two_tasks_and_a_pool(2, &a, &b, &hbm);
	eng_effect(e, a, hbm, 0, 60, ENG_AT_START);
	eng_effect(e, a, hbm, 0, -60, ENG_AT_END);
	eng_effect(e, b, hbm, 0, 50, ENG_AT_START);
	eng_effect(e, b, hbm, 0, -50, ENG_AT_END);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
	const struct eng_pool *p = eng_pool_at(e, hbm);
	CU_ASSERT_EQUAL(p->peak, 60);
	CU_ASSERT_EQUAL(p->cur, 0);
	CU_ASSERT_EQUAL(p->peak_ns, 0);
	CU_ASSERT(p->hist_n >= 3);
	CU_ASSERT_EQUAL(p->hist[p->hist_n - 1].value, 0);
	eng_free(e);
}

/* Within one instant a pool's history keeps the highest level and the last: a task taking 70 B
 * and giving 30 back as it starts (a temporary that stands for a moment), at 1 s after a first
 * 1 s task that held 10 B, leaves (1 s, 80) then (1 s, 50) where the level reached 80, the
 * peak; at the first task's start the level only rises, one sample, (0, 10). */
static void a_history_keeps_the_highest_level_of_an_instant(void)
{
	struct eng_stats st;
	int a, b, hbm;
	struct eng *e = two_tasks_and_a_pool(1, &a, &b, &hbm);
	eng_effect(e, a, hbm, 0, 10, ENG_AT_START);
	eng_effect(e, b, hbm, 0, 70, ENG_AT_START);
	eng_effect(e, b, hbm, 0, -30, ENG_AT_START);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
	const struct eng_pool *p = eng_pool_at(e, hbm);
	CU_ASSERT_EQUAL(p->peak, 80);
	CU_ASSERT_FATAL(p->hist_n >= 3);
	CU_ASSERT_EQUAL(p->hist[0].t_ns, 0);
	CU_ASSERT_EQUAL(p->hist[0].value, 10);
	CU_ASSERT_EQUAL(p->hist[1].t_ns, 1000000000);
	CU_ASSERT_EQUAL(p->hist[1].value, 80);
	CU_ASSERT_EQUAL(p->hist[2].t_ns, 1000000000);
	CU_ASSERT_EQUAL(p->hist[2].value, 50);
	eng_free(e);
}

/* A pool's stop ends the run where its level first passes it. Three 1 s tasks in a row each
 * hold 40 B of a pool and keep it: the level passes 100 when the third starts (at 2 s), so a
 * stop at 100 ends the run at 2 s with the peak at 120, and the third task never finishes; a
 * stop at 120 is never passed and the run is the whole one (3 s). */
static void a_pool_stop_ends_the_run_where_it_is_passed(void)
{
	for (int k = 0; k < 2; k++) {
		struct eng *e = eng_new();
		struct eng_stats st;
		int l = eng_resource(e, "l", 1, "B");
		int s = eng_stream(e, "s");
		int hbm = eng_pool(e, "hbm", 100, 1);
		for (int i = 0; i < 3; i++)
			eng_effect(e, eng_task(e, "t", s, 1, 0, 1, &l, NULL), hbm, 0, 40,
				   ENG_AT_START);
		CU_ASSERT_EQUAL_FATAL(eng_pool_stop(e, hbm, k ? 120 : 100), 0);
		CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
		CU_ASSERT_EQUAL(eng_pool_stopped(e), k == 0);
		CU_ASSERT_EQUAL(eng_pool_at(e, hbm)->peak, 120);
		CU_ASSERT_EQUAL(st.end_ns, (uint64_t)((k ? 3 : 2) * NS));
		CU_ASSERT_EQUAL(eng_task_at(e, 2)->t_end, (uint64_t)(k ? 3 * NS : 0));
		CU_ASSERT_EQUAL(eng_pool_stop(e, 7, 100), -1); /* no such pool */
		eng_free(e);
	}
}

/* Two tasks startable at one instant: the one whose start frees memory goes first, whatever
 * order they became startable in. When x ends at 1 s, the copy y (next on x's stream, queued
 * first) takes 30 at its start and the compute z (x's successor) frees 50 of what x left; the
 * peak stays at the 60 before the instant (60 - 10 - 50 + 30 = 30 after it), not 50 + 30. */
static void an_instant_frees_before_it_allocates(void)
{
	struct eng *e = eng_new();
	struct eng_stats st;
	int l = eng_resource(e, "l", 1, "B"), g = eng_resource(e, "g", 1, "FLOP");
	int xs = eng_stream(e, "copy");
	int hbm = eng_pool(e, "hbm", 1000, 1);
	int x = eng_task(e, "x", xs, 1, 0, 1, &l, NULL);
	int y = eng_task(e, "y", xs, 1, 0, 1, &l, NULL);
	int z = eng_task(e, "z", -1, 1, 0, 1, &g, NULL);
	eng_dep(e, x, z);
	eng_effect(e, x, hbm, 0, 60, ENG_AT_START);
	eng_effect(e, x, hbm, 0, -10, ENG_AT_END);
	eng_effect(e, y, hbm, 0, 30, ENG_AT_START);
	eng_effect(e, z, hbm, 0, -50, ENG_AT_START);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
	CU_ASSERT_EQUAL(eng_task_at(e, y)->t_start, (uint64_t)NS);
	CU_ASSERT_EQUAL(eng_task_at(e, z)->t_start, (uint64_t)NS);
	const struct eng_pool *p = eng_pool_at(e, hbm);
	CU_ASSERT_EQUAL(p->peak, 60);
	CU_ASSERT_EQUAL(p->peak_ns, 0);
	CU_ASSERT_EQUAL(p->cur, 30);
	eng_free(e);
}

/* Power: a GPU at 700 W computing for 1 s then 100 W idle during a 1 s copy, node base 50 W
 * standing for 2 nodes: peak 750 W per node, energy 2 x (750 + 150) J. */
static void power_follows_device_states(void)
{
	struct eng *e = eng_new();
	struct eng_stats st;
	int sm = eng_resource(e, "sm", 1, "FLOP"), pcie = eng_resource(e, "pcie", 1, "B");
	int node = eng_node(e, "node", 50, 2);
	int gpu = eng_device(e, node, "gpu", 100, 1);
	eng_device_state(e, gpu, sm, 700);
	int c = eng_task(e, "compute", -1, 1, 0, 1, &sm, NULL);
	int x = eng_task(e, "copy", -1, 1, 0, 1, &pcie, NULL);
	eng_dep(e, c, x);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
	ASSERT_NEAR_REL(st.peak_power_w, 750, 1e-12);
	ASSERT_NEAR_REL(st.energy_j, 2 * (750 + 150), 1e-9);
	eng_free(e);
}

/*
 * A capacity share, solved by hand: a compute of 100 units on an SM of 100/s beside a 10-byte
 * transfer on a 10 B/s link that also takes 2 SM units per byte (a collective's CTAs holding a
 * fifth of the SMs at link rate). The link binds the transfer at 10 B/s, which takes 20 of the
 * SM; the compute runs at 80 for 1 s, then alone at 100 for its last 20: it ends at 1.2 s. The
 * share neither makes the SM busy nor counts as its work: busy 1.2 s, work 100; the GPU draws
 * its 300 W for those 1.2 s. Alone, the transfer leaves the SM idle (50 W for 1 s).
 */
static void capacity_shares_slow_compute_without_making_it_busy(void)
{
	for (int alone = 0; alone < 2; alone++) {
		struct eng *e = eng_new();
		struct eng_stats st;
		int sm = eng_resource(e, "sm", 100, "FLOP"), link = eng_resource(e, "link", 10, "B");
		int node = eng_node(e, "node", 0, 1);
		int gpu = eng_device(e, node, "gpu", 50, 1);
		eng_device_state(e, gpu, sm, 300);
		int c = alone ? -1 : eng_task(e, "compute", -1, 100, 0, 1, &sm, NULL);
		int x = eng_task(e, "all-gather", -1, 10, 0, 1, &link, NULL);
		CU_ASSERT_EQUAL_FATAL(eng_task_share(e, x, sm, 2), 0);
		CU_ASSERT_EQUAL(eng_task_share(e, x, sm, 2), -1); /* once per path */
		CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
		CU_ASSERT_EQUAL(eng_task_at(e, x)->t_end, (uint64_t)(1 * NS));
		if (alone) {
			CU_ASSERT_EQUAL(eng_resource_at(e, sm)->busy_ns, 0);
			ASSERT_NEAR_REL(st.energy_j, 50, 1e-9);
		} else {
			CU_ASSERT_EQUAL(eng_task_at(e, c)->t_end, (uint64_t)(1.2 * NS));
			ASSERT_NEAR_REL(eng_resource_at(e, sm)->busy_ns, 1.2 * NS, 1e-9);
			ASSERT_NEAR_REL(eng_resource_at(e, sm)->work, 100, 1e-9);
			ASSERT_NEAR_REL(st.energy_j, 300 * 1.2, 1e-9);
		}
		ASSERT_NEAR_REL(eng_resource_at(e, link)->work, 10, 1e-9);
		eng_free(e);
	}
}

/* Conservation on a random graph: every byte allocated is freed, the work integrated on each
 * resource equals the work of the tasks that crossed it. */
static void random_graph_conserves_bytes_and_work(void)
{
	struct eng *e = eng_new();
	struct eng_stats st;
	int r[4], pool = eng_pool(e, "p", 1e12, 1);
	double want[4] = {0};
	for (int i = 0; i < 4; i++)
		r[i] = eng_resource(e, "r", 1e9 * (i + 1), "B");
	int s[3] = {eng_stream(e, "s0"), eng_stream(e, "s1"), eng_stream(e, "s2")};
	unsigned seed = 12345;
	for (int i = 0; i < 500; i++) {
		seed = seed * 1103515245u + 12345u;
		int n = 1 + (int)(seed >> 16) % 3, path[3];
		float sc[3];
		double work = 1e6 * (1 + (seed >> 8) % 100);
		for (int k = 0; k < n; k++) {
			path[k] = r[(i + k) % 4];
			sc[k] = (float)(1 + k);
			want[(i + k) % 4] += work * sc[k];
		}
		int t = eng_task(e, "t", (seed >> 4) % 2 ? s[i % 3] : -1, work, seed % 1000, n,
				 path, sc);
		eng_effect(e, t, pool, 0, (int64_t)work, ENG_AT_START);
		eng_effect(e, t, pool, 0, -(int64_t)work, ENG_AT_END);
		if (i > 10)
			eng_dep(e, (int)((seed >> 3) % (unsigned)i), t);
	}
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
	CU_ASSERT_EQUAL(eng_pool_at(e, pool)->cur, 0);
	for (int i = 0; i < 4; i++)
		ASSERT_NEAR_REL(eng_resource_at(e, r[i])->work, want[i], 1e-6);
	CU_ASSERT(st.events >= 500);
	eng_free(e);
}

/* A cycle is reported as a deadlock naming a task, not a hang or a crash. */
static void cycles_are_reported(void)
{
	struct eng *e = eng_new();
	int l = eng_resource(e, "l", 1, "B");
	int a = eng_task(e, "a", -1, 1, 0, 1, &l, NULL), b = eng_task(e, "b", -1, 1, 0, 1, &l, NULL);
	eng_dep(e, a, b);
	eng_dep(e, b, a);
	CU_ASSERT_EQUAL(eng_run(e, NULL), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(eng_error(e), "deadlock"));
	CU_ASSERT_EQUAL(eng_resource(e, "bad", 0, "B"), -1);
	eng_free(e);
}

/* Marks snapshot counters when their task ends. */
static void marks_snapshot_counters(void)
{
	struct eng *e = eng_new();
	int l = eng_resource(e, "l", 1, "B");
	int s = eng_stream(e, "s");
	int a = eng_task(e, "a", s, 2, 0, 1, &l, NULL);
	eng_task(e, "b", s, 3, 0, 1, &l, NULL);
	int m = eng_mark(e, a);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, NULL), 0);
	const struct eng_snapshot *sn = eng_snapshot_at(e, m);
	CU_ASSERT(sn->taken);
	CU_ASSERT_EQUAL(sn->t_ns, (uint64_t)(2 * NS));
	ASSERT_NEAR_REL(sn->work[l], 2, 1e-9);
	eng_free(e);
}

/*
 * A mark's queues, solved by hand: a compute stream runs tasks of 1 FLOP at 1 FLOP/s, each on
 * the one before's output, and each sends its own on a copy stream over a 1 B/s link. With
 * 1 B a copy, copy k runs from k to k + 1 s: as compute k ends at k s, copy k - 1 ends and
 * copy k starts, so the link's queue is 1 B at every mark (and compute k + 1's 1 FLOP). With
 * 2 B a copy the link falls behind: copy 1 runs 1-3 s, copy 2 3-5 s; at 2 s copy 1 has 1 B
 * left and copy 2 waits with 2 (3 B), at 3 s copy 2 has 2 left and copy 3 waits with 2
 * (4 B): a backlog a byte longer each second, where the compute's queue stays as it was. Both
 * count what the mark's instant made ready (copy k as compute k ends).
 */
static void marks_read_queues(void)
{
	for (int slow = 0; slow < 2; slow++) {
		struct eng *e = eng_new();
		int sm = eng_resource(e, "sm", 1, "FLOP"), link = eng_resource(e, "link", 1, "B");
		int comp = eng_stream(e, "comp"), copy = eng_stream(e, "copy");
		int k[6];
		for (int j = 0; j < 6; j++) {
			k[j] = eng_task(e, "compute", comp, 1, 0, 1, &sm, NULL);
			if (j > 0) /* it reads the one before's output */
				eng_dep(e, k[j - 1], k[j]);
			eng_dep(e, k[j], eng_task(e, "copy", copy, slow ? 2 : 1, 0, 1, &link, NULL));
		}
		int m0 = eng_mark(e, k[1]), m1 = eng_mark(e, k[2]);
		CU_ASSERT_EQUAL_FATAL(eng_run(e, NULL), 0);
		const struct eng_snapshot *a = eng_snapshot_at(e, m0), *b = eng_snapshot_at(e, m1);
		CU_ASSERT_EQUAL(a->t_ns, (uint64_t)(2 * NS));
		CU_ASSERT_EQUAL(b->t_ns, (uint64_t)(3 * NS));
		ASSERT_NEAR_REL(a->queued[sm], 1, 1e-9);
		ASSERT_NEAR_REL(b->queued[sm], 1, 1e-9);
		ASSERT_NEAR_REL(a->queued[link], slow ? 3 : 1, 1e-9);
		ASSERT_NEAR_REL(b->queued[link], slow ? 4 : 1, 1e-9);
		eng_free(e);
	}
}

/*
 * Folding, solved by hand. A pass of n blocks: each copies its weights up (1 B at 1 B/s, on a
 * copy stream, at most two blocks ahead of the compute) and computes (2 FLOP at 1 FLOP/s),
 * keeping 10 bytes until a release after the last block; the GPU draws 100 W while it computes.
 * The computes run back to back after the first copy: n = 20 ends at 1 + 2 x 20 = 41 s, with
 * 4,000 J and a 200-byte peak. Built with blocks 4..15 left out and a fold over the gap it
 * gives the same, exactly. With a write-back per block (3 s on a disk of its own, nothing
 * throttling it) the write-backs queue up by a second a block: not periodic, so the fold is
 * refused and the run says which.
 */
static int fold_pass(struct eng *e, uint32_t n, uint32_t lo, uint32_t hi, bool writeback,
		     int *last)
{
	int link = eng_resource(e, "link", 1, "B"), sm = eng_resource(e, "sm", 1, "FLOP");
	int disk = eng_resource(e, "disk", 1, "B");
	int up = eng_stream(e, "copy"), comp = eng_stream(e, "comp"), wb = eng_stream(e, "wb");
	int pool = eng_pool(e, "gpu", 1e6, 1);
	int node = eng_node(e, "node", 0, 1);
	eng_device_state(e, eng_device(e, node, "gpu", 0, 1), sm, 100);
	int ring[64], nc = 0, probe[2] = {-1, -1};
	for (uint32_t j = 0; j < n; j++) {
		if (j >= lo && j < hi)
			continue;
		int c = eng_task(e, "copy", up, 1, 0, 1, &link, NULL);
		int k = eng_task(e, "compute", comp, 2, 0, 1, &sm, NULL);
		eng_dep(e, c, k);
		if (nc >= 2)
			eng_dep(e, ring[nc - 2], c);
		eng_effect(e, k, pool, 0, 10, ENG_AT_START);
		if (writeback)
			eng_dep(e, k, eng_task(e, "write back", wb, 3, 0, 1, &disk, NULL));
		ring[nc++] = k;
		if (hi > lo && (j == lo - 1 || j == hi))
			probe[j == hi] = k;
	}
	*last = eng_task(e, "release", -1, 0, 0, 0, NULL, NULL);
	eng_dep(e, ring[nc - 1], *last);
	eng_effect(e, *last, pool, 0, -10 * (int64_t)n, ENG_AT_START);
	if (hi == lo)
		return 0;
	uint32_t per = (uint32_t)(probe[1] - probe[0]);
	return eng_fold(e, probe, 1, probe[1], 3 * per, 3 * per, hi - lo);
}

static void folds_add_the_left_out_periods(void)
{
	for (int wb = 0; wb < 2; wb++) {
		struct eng_stats whole, folded;
		struct eng *e = eng_new();
		int last;
		eng_keep_history(e, false);
		CU_ASSERT_EQUAL_FATAL(fold_pass(e, 20, 0, 0, wb, &last), 0);
		int m = eng_mark(e, last);
		CU_ASSERT_EQUAL_FATAL(eng_run(e, &whole), 0);
		uint64_t t_mark = eng_snapshot_at(e, m)->t_ns;
		eng_reset(e);
		CU_ASSERT_EQUAL_FATAL(fold_pass(e, 20, 4, 16, wb, &last), 0);
		m = eng_mark(e, last);
		CU_ASSERT_EQUAL_FATAL(eng_run(e, &folded), 0);
		if (wb) {
			/* 20 write-backs of 3 s after the first compute ends at 3 s */
			CU_ASSERT_EQUAL(whole.end_ns, (uint64_t)(63 * NS));
			CU_ASSERT_EQUAL(eng_fold_failed(e), 1u);
			eng_free(e);
			continue;
		}
		CU_ASSERT_EQUAL(eng_fold_failed(e), 0u);
		CU_ASSERT_EQUAL(whole.end_ns, (uint64_t)(41 * NS));
		CU_ASSERT_EQUAL(folded.end_ns, whole.end_ns);
		CU_ASSERT_EQUAL(folded.events, whole.events);
		ASSERT_NEAR_REL(whole.energy_j, 4000, 1e-9);
		ASSERT_NEAR_REL(folded.energy_j, whole.energy_j, 1e-12);
		CU_ASSERT_EQUAL(eng_pool_at(e, 0)->peak, 200);
		CU_ASSERT_EQUAL(eng_pool_at(e, 0)->cur, 0);
		CU_ASSERT_EQUAL(eng_snapshot_at(e, m)->t_ns, t_mark);
		ASSERT_NEAR_REL(eng_resource_at(e, 1)->work, 40, 1e-12);
		ASSERT_NEAR_REL(eng_resource_at(e, 1)->busy_ns, 40 * NS, 1e-12);
		eng_free(e);
	}
}

/*
 * A pool's stop in a folded run compares the whole graph's level. fold_pass's 20 blocks each
 * keep 10 bytes: the level is 10 (j + 1) once block j computes, 200 at the end. Whole, a stop at
 * 150 ends the run when block 15 starts (160, at 31 s). Folded (blocks 4..15 left out, one
 * block a period), the run builds block 16 after block 3 at 10 x 5 = 50 bytes; when it starts
 * the fold is found periodic and its 12 left-out blocks add 120: the level is 170, past the
 * stop, and the run ends there, reporting 170 (the whole graph's level then, no more than its
 * peak). A stop at 200 is never passed: the folded run is the whole one.
 */
static void a_folded_run_stops_at_the_whole_graphs_level(void)
{
	static const int64_t stops[] = {150, 200};
	for (int k = 0; k < 2; k++)
		for (int folded = 0; folded < 2; folded++) {
			struct eng *e = eng_new();
			struct eng_stats st;
			int last;
			eng_keep_history(e, false);
			CU_ASSERT_EQUAL_FATAL(fold_pass(e, 20, folded ? 4 : 0, folded ? 16 : 0,
							false, &last),
					      0);
			CU_ASSERT_EQUAL_FATAL(eng_pool_stop(e, 0, stops[k]), 0);
			CU_ASSERT_EQUAL_FATAL(eng_run(e, &st), 0);
			CU_ASSERT_EQUAL(eng_fold_failed(e), 0u);
			CU_ASSERT_EQUAL(eng_pool_stopped(e), k == 0);
			int64_t peak = k ? 200 : folded ? 170 : 160;
			CU_ASSERT_EQUAL(eng_pool_at(e, 0)->peak, peak);
			if (k == 0 && !folded)
				CU_ASSERT_EQUAL(st.end_ns, (uint64_t)(31 * NS));
			if (k == 1)
				CU_ASSERT_EQUAL(st.end_ns, (uint64_t)(41 * NS));
			eng_free(e);
		}
}

/*
 * A pass that settles into a two-block cycle. Each block reads 3 B from a disk (1 B/s, shared
 * max-min), computes 2 s once its read is in, and writes 2 B back to the same disk; a read waits
 * for the compute two blocks before it (two buffers). The disk carries 5 B a block, so every two
 * blocks take 10 s, but reads and writes overlap differently in alternate blocks: the computes
 * start 4 s and 6 s apart (c0 at 3 s, c1 at 7 s, c2 at 13 s, ...), and no single block repeats
 * the one before it. 20 blocks end at 101 s. Left out with an even gap, the fold finds the period
 * at its second probe (two blocks back) and gives the whole run's end and events exactly; with
 * an odd gap the period does not divide it: the fold is refused and names the period, 2.
 */
static int cycle_pass(struct eng *e, uint32_t n, uint32_t lo, uint32_t hi)
{
	int disk = eng_resource(e, "disk", 1, "B"), sm = eng_resource(e, "sm", 1, "FLOP");
	int rd = eng_stream(e, "read"), comp = eng_stream(e, "comp"), wr = eng_stream(e, "write");
	int c[64], nc = 0, a[3] = {-1, -1, -1}, b = -1;
	for (uint32_t j = 0; j < n; j++) {
		if (j >= lo && j < hi)
			continue;
		int r = eng_task(e, "read", rd, 3, 0, 1, &disk, NULL);
		int k = eng_task(e, "compute", comp, 2, 0, 1, &sm, NULL);
		eng_dep(e, r, k);
		if (nc >= 2)
			eng_dep(e, c[nc - 2], r);
		eng_dep(e, k, eng_task(e, "write", wr, 2, 0, 1, &disk, NULL));
		c[nc++] = k;
		if (j < lo && j + 3 >= lo)
			a[lo - 1 - j] = k;
		if (j == hi)
			b = k;
	}
	if (hi == lo)
		return 0;
	uint32_t per = (uint32_t)(b - a[0]);
	return eng_fold(e, a, 3, b, 3 * per, 3 * per, hi - lo);
}

static void folds_find_a_cycle_of_blocks(void)
{
	struct eng_stats whole, folded;
	struct eng *e = eng_new();
	eng_keep_history(e, false);
	CU_ASSERT_EQUAL_FATAL(cycle_pass(e, 20, 0, 0), 0);
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &whole), 0);
	CU_ASSERT_EQUAL(whole.end_ns, (uint64_t)(101 * NS));
	CU_ASSERT_EQUAL(eng_task_at(e, 4)->t_start, (uint64_t)(7 * NS)); /* block 1's compute */
	CU_ASSERT_EQUAL(eng_task_at(e, 7)->t_start, (uint64_t)(13 * NS)); /* block 2's */
	eng_reset(e);
	CU_ASSERT_EQUAL_FATAL(cycle_pass(e, 20, 6, 14), 0); /* 8 blocks left out */
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &folded), 0);
	CU_ASSERT_EQUAL(eng_fold_failed(e), 0u);
	CU_ASSERT_EQUAL(folded.end_ns, whole.end_ns);
	CU_ASSERT_EQUAL(folded.events, whole.events);
	ASSERT_NEAR_REL(eng_resource_at(e, 0)->work, 100, 1e-12); /* 5 B a block */
	eng_reset(e);
	CU_ASSERT_EQUAL_FATAL(cycle_pass(e, 20, 6, 13), 0); /* 7: odd */
	CU_ASSERT_EQUAL_FATAL(eng_run(e, &folded), 0);
	CU_ASSERT_EQUAL(eng_fold_failed(e), 1u);
	CU_ASSERT_EQUAL(eng_fold_period(e, 0), 2u);
	eng_free(e);
}

/* The builder's scratch is the same buffer from one build to the next: kept by eng_reset, its
 * contents the caller's, moved only when a build asks for more than it holds. */
static void the_scratch_is_kept_between_builds(void)
{
	struct eng *e = eng_new();
	unsigned char *p = eng_scratch(e, 100);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	memset(p, 0xab, 100);
	eng_reset(e);
	CU_ASSERT_PTR_EQUAL(eng_scratch(e, 50), p);
	CU_ASSERT_EQUAL(p[99], 0xab);
	unsigned char *q = eng_scratch(e, 1 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_EQUAL(q[0], 0xab); /* grown, what it held kept */
	CU_ASSERT_PTR_EQUAL(eng_scratch(e, 100), q);
	eng_free(e);
}

int suite_engine(void)
{
	static const struct test_case cases[] = {
		{"single transfer = latency + bytes/bandwidth",
		 single_transfer_takes_latency_plus_bytes_over_bandwidth},
		{"max-min sharing matches the hand solution", max_min_sharing_matches_hand_solution},
		{"a shared resource binds only when its flows' tops exceed it",
		 a_shared_resource_binds_only_when_tops_exceed_it},
		{"rates recomputed when flows end", rates_are_recomputed_when_flows_end},
		{"scaled paths bind on the tighter resource",
		 scaled_paths_bind_on_the_tighter_resource},
		{"streams in order, dependencies hold", streams_are_in_order_and_dependencies_hold},
		{"runs are deterministic", runs_are_deterministic},
		{"pools: peaks, history, free before alloc", pools_record_peaks_and_free_before_alloc},
		{"a history keeps the highest level of an instant",
		 a_history_keeps_the_highest_level_of_an_instant},
		{"an instant frees before it allocates", an_instant_frees_before_it_allocates},
		{"a pool stop ends the run where it is passed",
		 a_pool_stop_ends_the_run_where_it_is_passed},
		{"power follows device states", power_follows_device_states},
		{"capacity shares slow compute without making it busy",
		 capacity_shares_slow_compute_without_making_it_busy},
		{"random graph conserves bytes and work", random_graph_conserves_bytes_and_work},
		{"cycles are reported", cycles_are_reported},
		{"marks snapshot counters", marks_snapshot_counters},
		{"marks read queues", marks_read_queues},
		{"folds add the left-out periods", folds_add_the_left_out_periods},
		{"a folded run stops at the whole graph's level",
		 a_folded_run_stops_at_the_whole_graphs_level},
		{"folds find a cycle of blocks", folds_find_a_cycle_of_blocks},
		{"the builder's scratch is kept between builds", the_scratch_is_kept_between_builds},
	};
	return add_suite("engine", cases, sizeof cases / sizeof cases[0]);
}
