/* estimate — see estimate.h. */
#include "estimate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../model/act.h"
#include "units.h"

/*
 * Sustained fraction of the dense bf16 peak that transformer layers reach when communication is
 * overlapped: hardware FLOPs utilisation of 57-74 % in published runs (Korthikanti et al. HFU
 * 52.8-57.0 % at scale, published.md C.3, which includes exposed communication; MosaicML
 * llm-foundry HFU 59.6-73.7 % on A100 with FSDP, C.7). 0.65 sits inside that range; `tierplan
 * calibrate` replaces it with the GEMM rate measured on the user's GPU.
 */
const double SIM_GEMM_EFFICIENCY = 0.65;

/*
 * Achievable host<->GPU copy bandwidth per x16 link, one direction (copy engine, pinned memory):
 * Gen4 24.8 GB/s (nvbandwidth on A100, published.md D.3), Gen5 55.63 GB/s (nvbandwidth example,
 * D.3). Gen3 and Gen6 scale the Gen4 figure by the signalling rate (x0.5, x4) [D].
 */
double sim_pcie_bandwidth(double gen, double lanes)
{
	double x16;

	if (gen >= 6)
		x16 = 4 * 24.8e9;
	else if (gen >= 5)
		x16 = 55.63e9;
	else if (gen >= 4)
		x16 = 24.8e9;
	else
		x16 = 12.4e9;
	return x16 * lanes / 16.0;
}

/*
 * Bytes an AdamW step touches per parameter: read fp32 master, m, v and the gradient, write
 * master, m, v and the compute-dtype copy: 4*3 + 2 read + 4*3 + 2 written = 28 B for mixed
 * precision (the same count as ZeRO-Infinity's "optimizer states read + write once", published.md
 * 9.2). The update is memory bound on GPUs and CPUs alike.
 */
#define ADAM_BYTES_PER_PARAM 28.0

/* Bytes of DRAM per node kept back for the OS, the framework and pinned-allocation slack; a
 * placeholder until calibrate measures it [U]. */
#define DRAM_RESERVE (32.0 * 1073741824.0)

/* Seconds per year for amortisation. */
#define YEAR_SECONDS (365.0 * 86400.0)

static double ring_allreduce(double bytes, double n, double bw)
{
	return n > 1 && bw > 0 ? 2.0 * (n - 1) / n * bytes / bw : 0;
}

static double ring_gather(double bytes, double n, double bw)
{
	return n > 1 && bw > 0 ? (n - 1) / n * bytes / bw : 0;
}

/* One-direction bandwidth between GPUs of a node: half the NVLink total, else the PCIe link. */
static double intra_node_bw(const struct sim_hw *hw)
{
	if (hw->gpu.gpu_link > 0)
		return hw->gpu.gpu_link / 2.0;
	return sim_pcie_bandwidth(hw->gpu.host_link_gen, hw->gpu.host_link_lanes);
}

static double flash_endurance_bytes(const struct cfg_flash *f)
{
	if (f->tbw > 0)
		return f->tbw;
	return f->dwpd * f->capacity * 365.0 * f->warranty_years;
}

/* Runtime, energy, cost and wear from step time and power; shared by both kinds. */
static void finish(const struct sim_workload *w, const struct sim_hw *hw, const struct sim_econ *e,
		   struct sim_option *o, double node_capex, uint32_t flash_drives)
{
	double hours;

	o->tokens_per_second = o->step_seconds > 0 ? o->tokens_per_step / o->step_seconds : 0;
	o->steps = ceil(w->tokens / o->tokens_per_step);
	o->runtime_seconds = o->steps * o->step_seconds;
	hours = o->runtime_seconds / 3600.0;
	o->model_tflops_per_gpu = mdl_job_model_flops(&w->arch, &w->job) * (double)o->grad_accum *
				  (double)o->layout.dp / o->step_seconds / o->gpus / 1e12;
	o->energy_kwh = o->avg_power_watts * hours / 1000.0;

	double capex = o->gpus * hw->gpu.price + node_capex;
	o->cost_capex = capex * o->runtime_seconds / (e->amortize_years * YEAR_SECONDS);
	o->cost_energy = o->energy_kwh * e->pue * e->usd_per_kwh;
	o->cost_cloud = o->gpus * hw->gpu.cloud_per_hour * hours;
	o->cost_total = o->cost_capex + o->cost_energy;

	o->flash_bytes_written = o->flash_bytes_written_per_step * o->steps;
	o->flash_life_fraction =
		flash_drives ? o->flash_bytes_written /
				       (flash_drives * flash_endurance_bytes(&hw->flash))
			     : 0;
}

void sim_estimate_gpu_only(const struct sim_workload *w, const struct sim_hw *hw,
			   const struct sim_econ *e, const struct mdl_layout *l, uint64_t m,
			   struct sim_option *o)
{
	const struct mdl_arch *a = &w->arch;
	const struct mdl_job *j = &w->job;
	double flops = SIM_GEMM_EFFICIENCY * hw->gpu.bf16_flops;
	double ebytes = mdl_job_act_bytes(j);
	double sbh = (double)j->seq * (double)j->micro_batch * (double)a->hidden;
	uint32_t gpn = hw->gpus_per_node;

	memset(o, 0, sizeof *o);
	o->kind = SIM_GPU_ONLY;
	o->policy = "gpu";
	o->layout = *l;
	o->gpus = l->tp * l->pp * l->dp;
	o->nodes = (o->gpus + gpn - 1) / gpn;
	o->recompute = j->recompute;
	o->micro_batch = j->micro_batch;
	o->grad_accum = m;
	snprintf(o->name, sizeof o->name, "%u GPU%s tp%u pp%u dp%u zero%u", o->gpus,
		 o->gpus > 1 ? "s" : "", l->tp, l->pp, l->dp, l->zero);

	mdl_layout_memory(a, j, l, m, &o->gpu_mem);
	o->peak_gpu = o->gpu_mem.total;
	o->fits = o->peak_gpu <= hw->gpu.memory;
	if (!o->fits) {
		char need[32], have[32];
		snprintf(o->overflow, sizeof o->overflow, "gpu: needs %s of %s",
			 cfg_fmt_bytes(o->peak_gpu, need, sizeof need),
			 cfg_fmt_bytes(hw->gpu.memory, have, sizeof have));
	}

	/* bandwidths: TP inside a node; PP and DP leave the node once the group outgrows it */
	double intra = intra_node_bw(hw);
	double net = hw->host.network_per_gpu > 0 ? hw->host.network_per_gpu : intra;
	double tp_bw = intra;
	double pp_bw = l->tp * l->pp <= gpn ? intra : net;
	double dp_bw = o->gpus <= gpn ? intra : net;

	/* per micro-batch on one GPU */
	double t_mb = mdl_job_hardware_flops(a, j) / (l->tp * l->pp) / flops;
	double layers = (double)a->layers / l->pp;
	/* Megatron: 2 all-reduces forward and 2 backward per layer, 2 more under full recompute */
	double ar_per_layer = j->recompute == MDL_RC_FULL ? 6 : 4;
	double t_tp = layers * ar_per_layer * ring_allreduce(ebytes * sbh, l->tp, tp_bw);
	double t_p2p = l->pp > 1 ? 2.0 * ebytes * sbh / l->tp / pp_bw : 0;
	double t_stage = t_mb + t_tp + t_p2p;

	/* data parallel, per optimizer step, on the shard each GPU owns */
	struct mdl_states st;
	mdl_job_states(a, j, &st);
	double grads = st.gradients_bytes / (l->tp * l->pp);
	double wts = st.weights_bytes / (l->tp * l->pp);
	double t_dp = 0, exposed = 0;
	if (l->zero <= 1)
		t_dp = ring_allreduce(grads, l->dp, dp_bw);
	else if (l->zero == 2)
		t_dp = ring_gather(grads, l->dp, dp_bw) + ring_gather(wts, l->dp, dp_bw);
	if (l->zero <= 2) {
		/* bucketed reduction overlaps the last micro-batch's backward (2/3 of it) */
		exposed = fmax(0, t_dp - t_mb * 2.0 / 3.0);
	} else {
		/* ZeRO-3 / FSDP: gather weights for forward and backward, reduce-scatter grads,
		 * every micro-batch, prefetched under that micro-batch's compute */
		double per_mb = 2 * ring_gather(wts, l->dp, dp_bw) + ring_gather(grads, l->dp, dp_bw);
		t_dp = per_mb * (double)m;
		exposed = fmax(0, per_mb - t_mb) * (double)m;
	}
	double trainable_shard = (double)st.trainable_params / (l->tp * l->pp) /
				 (l->zero >= 1 ? l->dp : 1);
	double t_opt = trainable_shard * ADAM_BYTES_PER_PARAM / hw->gpu.hbm_bandwidth;

	o->t_compute = t_mb * (double)m;
	o->t_comm = t_tp * (double)m + t_dp;
	o->step_seconds = ((double)m + l->pp - 1) * t_stage + exposed + t_opt;
	o->tokens_per_step = (double)m * (double)l->dp * (double)j->micro_batch * (double)j->seq;

	/* power: all GPUs compute together (phase-synchronous, calibration-power-cost.md 2.5);
	 * peak = GPUs at TDP plus the node's other parts; energy weights GPU busy time */
	double dram_w = hw->host.dram_power_per_gb * hw->host.dram / 1e9;
	double node_other = hw->host.base_power + hw->host.cpu_idle_power + dram_w;
	double busy = fmin(1.0, (double)m * t_stage / o->step_seconds);
	o->peak_power_watts = o->gpus * hw->gpu.tdp + o->nodes * node_other;
	o->avg_power_watts = o->gpus * (busy * hw->gpu.tdp + (1 - busy) * hw->gpu.idle_power) +
			     o->nodes * node_other;
	o->peak_dram = 0;
	o->peak_flash = 0;
	finish(w, hw, e, o,
	       o->nodes * (hw->host.price + hw->host.dram / 1e9 * hw->host.dram_price_per_gb), 0);
}

void sim_estimate_tiered(const struct sim_workload *w, const struct sim_hw *hw,
			 const struct sim_econ *e, uint32_t n, uint64_t m, struct sim_option *o)
{
	const struct mdl_arch *a = &w->arch;
	struct mdl_job j = w->job;
	struct mdl_states st, layer;
	double flops = SIM_GEMM_EFFICIENCY * hw->gpu.bf16_flops;
	char b1[32], b2[32];

	/* layer streaming recomputes each layer from its checkpoint (ZeRO-Infinity, Ratel) */
	j.recompute = MDL_RC_FULL;
	memset(o, 0, sizeof *o);
	o->kind = SIM_TIERED;
	o->policy = "tiered";
	o->gpus = n;
	o->nodes = 1;
	o->layout = (struct mdl_layout){1, 1, n, 3, false};
	o->recompute = j.recompute;
	o->micro_batch = j.micro_batch;
	o->grad_accum = m;
	snprintf(o->name, sizeof o->name, "%u GPU%s + %s DRAM + %ux %s", n, n > 1 ? "s" : "",
		 cfg_fmt_bytes(hw->dram, b1, sizeof b1), hw->flash_count, hw->flash.name);

	mdl_job_states(a, &j, &st);
	mdl_job_states_part(a, &j, 1, false, false, &layer);
	struct mdl_states outer;
	mdl_job_states_part(a, &j, 0, true, true, &outer);

	/* GPU: two layer buffers (computing + prefetching), one layer of gradients, the trainable
	 * adapters when LoRA (small, resident), activations of one micro-batch with full
	 * recompute, the embedding/head when they are being used, and the CUDA context */
	double stream_w = fmax(layer.weights_bytes, outer.weights_bytes);
	double ckpt = (double)a->layers * mdl_act_layer_saved(a, &j, 1, false);
	double act_work = mdl_act_layer_working(a, &j, 1, false) + mdl_act_head(a, &j, 1, false) +
			  mdl_act_embed(a, &j, 1, false);
	struct mdl_gpu_memory *g = &o->gpu_mem;
	g->weights = 2 * stream_w;
	g->gradients = layer.gradients_bytes;
	g->optimizer = 0;
	g->other = MDL_CUDA_CONTEXT_BYTES;
	/* checkpoints stay on the GPU when they fit beside the rest, else go to DRAM */
	double base = g->weights + g->gradients + g->other + act_work;
	bool ckpt_on_gpu = base + ckpt <= hw->gpu.memory;
	g->activations = act_work + (ckpt_on_gpu ? ckpt : 0);
	g->total = g->weights + g->gradients + g->optimizer + g->activations + g->other;
	o->peak_gpu = g->total;

	/* DRAM then flash: staging buffers, compute-dtype weights (read 3x per micro-batch),
	 * gradients, offloaded checkpoints, then optimizer state; what does not fit spills */
	double staging = 2.0 * stream_w * n;
	double dram_free = hw->dram - DRAM_RESERVE - staging;
	double want[4] = {st.weights_bytes, st.gradients_bytes, ckpt_on_gpu ? 0 : ckpt * n,
			  st.optimizer_bytes};
	double in_dram[4], on_flash[4], dram_used = staging;
	for (int i = 0; i < 4; i++) {
		in_dram[i] = fmin(want[i], fmax(0, dram_free));
		on_flash[i] = want[i] - in_dram[i];
		dram_free -= in_dram[i];
		dram_used += in_dram[i];
	}
	o->peak_dram = dram_used + DRAM_RESERVE;
	o->peak_flash = on_flash[0] + on_flash[1] + on_flash[2] + on_flash[3];
	double flash_cap = hw->flash_count * hw->flash.capacity;

	o->fits = true;
	if (o->peak_gpu > hw->gpu.memory) {
		o->fits = false;
		snprintf(o->overflow, sizeof o->overflow, "gpu: needs %s of %s",
			 cfg_fmt_bytes(o->peak_gpu, b1, sizeof b1),
			 cfg_fmt_bytes(hw->gpu.memory, b2, sizeof b2));
	} else if (hw->dram - DRAM_RESERVE - staging < 0) {
		o->fits = false;
		snprintf(o->overflow, sizeof o->overflow, "dram: staging needs %s of %s",
			 cfg_fmt_bytes(staging + DRAM_RESERVE, b1, sizeof b1),
			 cfg_fmt_bytes(hw->dram, b2, sizeof b2));
	} else if (o->peak_flash > flash_cap) {
		o->fits = false;
		snprintf(o->overflow, sizeof o->overflow, "flash: needs %s of %s",
			 cfg_fmt_bytes(o->peak_flash, b1, sizeof b1),
			 cfg_fmt_bytes(flash_cap, b2, sizeof b2));
	}

	/* per micro-batch on each GPU */
	double t_mb = mdl_job_hardware_flops(a, &j) / flops;
	double pcie = sim_pcie_bandwidth(hw->gpu.host_link_gen, hw->gpu.host_link_lanes);
	double pcie_bytes = 3.0 * st.weights_bytes /* forward, recompute, backward */
			    + st.gradients_bytes + (ckpt_on_gpu ? 0 : 2 * ckpt);
	/* each GPU streams all weights; DRAM serves all GPUs at once */
	double t_pcie = fmax(pcie_bytes / pcie, n * pcie_bytes / hw->host.dram_bandwidth);
	/* weights or checkpoints that spilled to flash are read every micro-batch too */
	double flash_rd = hw->flash_count * hw->flash.read_bandwidth;
	double flash_wr = hw->flash_count * hw->flash.write_bandwidth;
	if (hw->host.flash_uplink > 0) {
		flash_rd = fmin(flash_rd, hw->host.flash_uplink);
		flash_wr = fmin(flash_wr, hw->host.flash_uplink);
	}
	double t_flash_mb = n * (3.0 * on_flash[0] + 2 * on_flash[2]) / flash_rd +
			    n * on_flash[2] / flash_wr;

	/* update once per step: CPU AdamW over all trainable params, optimizer state and gradients
	 * on flash read and written once (Smart-Infinity Table I, published.md 9.3) */
	double adam_rate = hw->host.cpu_cores * hw->host.cpu_adam_rate_per_core;
	double t_cpu = fmax((double)st.trainable_params / adam_rate,
			    (double)st.trainable_params * ADAM_BYTES_PER_PARAM /
				    hw->host.dram_bandwidth);
	double flash_upd = on_flash[3] + on_flash[1];
	double t_flash_upd = flash_upd / flash_rd + flash_upd / flash_wr;
	double t_update = fmax(t_cpu, t_flash_upd);
	/* backward is 3/4 of a fully recomputed micro-batch (2 of its 4 forward-equivalents
	 * plus the recompute) and hides that much of the update */
	double hide = 0.75 * fmax(t_mb, t_pcie);

	o->t_compute = t_mb * (double)m;
	o->t_pcie = t_pcie * (double)m;
	o->t_flash = t_flash_mb * (double)m + t_flash_upd;
	o->t_cpu = t_cpu;
	o->step_seconds = (double)m * fmax(fmax(t_mb, t_pcie), t_flash_mb) + fmax(0, t_update - hide);
	o->tokens_per_step = (double)m * n * (double)j.micro_batch * (double)j.seq;
	o->flash_bytes_written_per_step = on_flash[3] + on_flash[1] + (double)m * n * on_flash[2];

	/* power: GPUs compute while the CPU updates and the drives stream (the overlap is the
	 * point of the policy), so the peak has all of them at once */
	double dram_w = hw->host.dram_power_per_gb * hw->dram / 1e9;
	double busy = fmin(1.0, o->t_compute / o->step_seconds);
	double cpu_busy = fmin(1.0, t_cpu / o->step_seconds);
	double fl_busy = fmin(1.0, o->t_flash / o->step_seconds);
	bool uses_flash = o->peak_flash > 0;
	double drives = uses_flash ? hw->flash_count : 0;
	o->peak_power_watts = n * hw->gpu.tdp + hw->host.base_power + hw->host.cpu_power + dram_w +
			      drives * hw->flash.active_power;
	o->avg_power_watts = n * (busy * hw->gpu.tdp + (1 - busy) * hw->gpu.idle_power) +
			     hw->host.base_power + dram_w +
			     cpu_busy * hw->host.cpu_power + (1 - cpu_busy) * hw->host.cpu_idle_power +
			     drives * (fl_busy * hw->flash.active_power +
				       (1 - fl_busy) * hw->flash.idle_power);
	finish(w, hw, e, o,
	       hw->host.price + hw->dram / 1e9 * hw->host.dram_price_per_gb +
		       drives * hw->flash.price,
	       uses_flash ? hw->flash_count : 0);
}
