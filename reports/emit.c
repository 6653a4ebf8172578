/*
 * emit — `plan --emit DIR`: what to run for one option of a plan.
 *
 * For a DeepSpeed option (zero-offload, zero3-offload, zero-infinity, or the gpu policy without
 * tensor or pipeline parallelism): ds_config.json with the option's ZeRO stage, offload
 * targets, micro-batch, accumulation, precision and optimizer, the reduce bucket and, for NVMe,
 * the aio settings tierplan's fio jobs measure with. For a Megatron layout (tp or pp > 1):
 * Megatron-LM's arguments, the model's shape among them (arch_args), ZeRO-2 and 3 as
 * Megatron-FSDP and the gradients' dtype as planned. Either way launch.sh with
 * the node and GPU counts, and README.md with the prediction (step time, throughput, memory per
 * tier, runtime, cost), the assumptions and the `tierplan simulate` line that reproduces it, so
 * a real run can be checked against it. A GPU-only ZeRO option the plan priced as FSDP holds
 * its gradients and the files run as DeepSpeed's is simulated again as DeepSpeed runs it
 * (as_deepspeed): its README's GPU peak is that run's, the plan's named beside it.
 * The aiDAPTIV-style tiered policies have no public configuration format, and a job neither
 * framework's configuration can express as planned (pure bf16, bitsandbytes' optimizers; FP8 in
 * DeepSpeed; LoRA in Megatron-LM; FSDP's reduction deferred to the last micro-batch, --grad-sync
 * last) gets no configuration either: README.md only, saying why (cannot_express,
 * trainer_only). LoRA and QLoRA adapters live in the training script, so README.md states
 * them there (adapters).
 *
 * Files are written as report_dir writes them (a temporary renamed on close; the directory is
 * created, and a non-empty one must hold a tierplan report unless --force). Returns 0 or a
 * CFG_OUT_* code with err.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../model/act.h"
#include "../model/catalog.h"
#include "../sim/step.h"
#include "report.h"

/* The option's DeepSpeed ZeRO stage and offload devices; false for a Megatron layout or a
 * policy DeepSpeed does not run. */
static bool deepspeed_of(const struct sim_option *o, int *stage, const char **opt,
			 const char **par)
{
	*opt = *par = NULL;
	if (!strcmp(o->policy, "zero-offload")) {
		*stage = 2;
		*opt = "cpu";
	} else if (!strcmp(o->policy, "zero3-offload")) {
		*stage = 3;
		*opt = "cpu";
		*par = o->params_on_gpu ? NULL : "cpu";
	} else if (!strcmp(o->policy, "zero-infinity")) {
		*stage = 3;
		*opt = *par = "nvme";
	} else if (!strcmp(o->policy, "gpu") && o->layout.tp == 1 && o->layout.pp == 1 &&
		   mdl_layout_ep(&o->layout) == 1 && mdl_layout_cp(&o->layout) == 1) {
		*stage = (int)o->layout.zero;
	} else {
		return false;
	}
	return true;
}

/*
 * Why the DeepSpeed configuration (deepspeed true) or Megatron-LM's arguments cannot run the job
 * as planned; NULL when they can. Both keep fp32 master weights and optimizer states in 16-bit
 * training (DeepSpeed's ZeRO and bf16 optimizers hold fp32 partitions; Megatron-LM's --bf16
 * keeps fp32 main parameters), so a job planned in pure bf16 is not theirs; bitsandbytes' 8-bit
 * and paged optimizers and Adafactor are chosen in the training script, not in either; a
 * DeepSpeed config has no FP8 switch (Transformer Engine's layers in the model do it), while
 * Megatron-LM takes --fp8-format. [A: the frameworks' configuration references]
 */
static const char *cannot_express(const struct rpt_plan *r, bool deepspeed)
{
	const struct sim_workload *w = r->w;
	const struct sim_config *f = sim_plan_framework(r->req);
	if (f->opt_in_bwd)
		return "it steps the optimizer inside backward (torchtune's optimizer_in_bwd; "
		       "PyTorch FSDP's CPU offload for zero3-offload), which neither DeepSpeed nor "
		       "Megatron-LM does";
	if (f->act_offload && (deepspeed || !f->act_offload_layers))
		return "it offloads the activations to CPU as torchtune's "
		       "enable_activation_offloading does, which neither a DeepSpeed config nor "
		       "Megatron-LM's arguments set up (Megatron-LM offloads some layers': "
		       "--activation-offload-layers)";
	if (!deepspeed && w->job.method != MDL_FULL)
		return "it trains LoRA adapters, and Megatron-LM's pretrain_gpt.py trains every "
		       "weight";
	/* megatron/training/arguments.py, since June 2026 (Megatron-LM pull request 5115) */
	if (!deepspeed && (w->job.loss == MDL_LOSS_VOCAB_PARALLEL_TE ||
			   w->job.loss == MDL_LOSS_VOCAB_PARALLEL_TE_LEGACY))
		return "its loss is Transformer Engine's cross-entropy kernel, which Megatron-LM "
		       "refuses (--cross-entropy-fusion-impl te: \"disabled due to stability "
		       "issues\"); plan with --loss vocab-parallel-fused, Megatron-LM's own fused "
		       "kernel";
	if (deepspeed && w->job.master == MDL_MASTER_REMAINDER)
		return "its optimizer keeps only the low 16 bits of each fp32 master beside the "
		       "bf16 weights (--master-weights remainder), and DeepSpeed's keeps whole "
		       "fp32 partitions";
	switch (w->job.precision) {
	case MDL_BF16:
		return "it was planned in pure bf16 (no fp32 master weights or optimizer "
		       "states), and DeepSpeed and Megatron-LM keep fp32 masters in bf16 training";
	case MDL_FP8:
		if (deepspeed)
			return "a DeepSpeed config has no FP8 switch (Transformer Engine's layers "
			       "in the model script run FP8)";
		break;
	case MDL_BF16_MIXED:
	case MDL_FP16_MIXED:
	case MDL_FP32:
		break;
	}
	switch (w->job.optimizer) {
	case MDL_ADAMW8BIT:
	case MDL_PAGED_ADAMW:
	case MDL_PAGED_ADAMW8BIT:
	case MDL_ADAFACTOR:
		return "its optimizer (bitsandbytes' 8-bit or paged AdamW, or Adafactor) is "
		       "chosen in the training script, not in a DeepSpeed config or Megatron-LM's "
		       "arguments";
	case MDL_ADAMW:
	case MDL_LION:
	case MDL_SGD:
		break;
	}
	return NULL;
}

/* Why neither file can run an option as planned whose gradients wait for the last micro-batch
 * (--grad-sync last: the Hugging Face Trainer's no_sync on PyTorch FSDP): DeepSpeed reduces
 * every micro-batch's under ZeRO-2/3 and refuses no_sync (runtime/engine.py), and Megatron-LM's
 * ZeRO-2/3 is Megatron-FSDP's, not the Trainer's. */
static const char trainer_why[] =
    "its gradients stay whole until the last micro-batch (--grad-sync last: the Hugging Face "
    "Trainer's no_sync on PyTorch FSDP), which DeepSpeed's ZeRO-2/3 refuses and Megatron-LM "
    "does not do";

/* Whether option o ran with --grad-sync last's reduction deferred: several data-parallel ranks
 * and micro-batches (step.c, grads_synced_last). */
static bool trainer_only(const struct rpt_plan *r, const struct sim_option *o)
{
	return sim_plan_grad_sync_last(r->req, o) && o->layout.dp > 1 && o->grad_accum > 1;
}

static const char *optimizer_type(enum mdl_optimizer opt)
{
	switch (opt) {
	case MDL_ADAMW:
	case MDL_ADAMW8BIT:
	case MDL_PAGED_ADAMW:
	case MDL_PAGED_ADAMW8BIT:
		return "AdamW";
	case MDL_LION:
		return "Lion";
	case MDL_SGD:
		return "SGD";
	case MDL_ADAFACTOR:
		return NULL;
	}
	return NULL;
}

/*
 * The reduce_bucket_size to write: the size the plan simulated where it was chosen
 * (--reduce-bucket, or the --deepspeed config's); else an offload policy's plan, or any under
 * --deepspeed, simulated DeepSpeed's default, 5e8 elements (its gradients leave the GPU through
 * those buckets); a GPU-only option planned without --deepspeed was priced as Megatron-LM and
 * FSDP hold it, without DeepSpeed's buckets, so it gets the smallest usual one, Hugging Face's
 * "auto": hidden_size x hidden_size (transformers integrations/deepspeed.py) [A: DeepSpeed config
 * docs, transformers source].
 */
static double reduce_bucket(const struct rpt_plan *r, const struct sim_option *o)
{
	const struct sim_config *f = sim_plan_framework(r->req);
	double h = (double)r->w->arch.hidden;
	return f->reduce_bucket > 0 || strcmp(o->policy, "gpu") || r->req->policy
		       ? step_reduce_bucket(f)
		       : h * h;
}

/* Whether the emitted ds_config.json runs GPU-only option o with buckets the plan did not price:
 * the plan holds ZeRO-1/2/3 gradients as Megatron-LM and FSDP do (under --deepspeed it priced
 * DeepSpeed's itself). */
static bool ds_buckets_unpriced(const struct rpt_plan *r, const struct sim_option *o)
{
	return !strcmp(o->policy, "gpu") && o->layout.zero >= 1 && o->layout.dp > 1 &&
	       !r->req->policy;
}

/* Option o as DeepSpeed runs it from the emitted ds_config.json: the plan's configuration with
 * DeepSpeed's buffers (sim_config.deepspeed) and the reduce bucket the file names, which is what
 * the README's `tierplan simulate --deepspeed ds_config.json` line computes. 0, or CFG_OUT_IO
 * with err. */
static int as_deepspeed(const struct rpt_plan *r, const struct sim_option *o,
			struct sim_option *out, char *err, size_t errlen)
{
	struct sim_workload w = *r->w;
	struct mdl_hw hw = *r->hw;
	struct sim_config c;
	struct eng *e = eng_new();
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return CFG_OUT_IO;
	}
	sim_plan_rerun(r->req, o, &w, &hw, &c);
	c.deepspeed = true;
	c.reduce_bucket = reduce_bucket(r, o);
	int rc = sim_run(e, &w, &hw, r->econ, &c, out, err, errlen) ? CFG_OUT_IO : 0;
	eng_free(e);
	return rc;
}

static void ds_config(FILE *fp, const struct rpt_plan *r, const struct sim_option *o, int stage,
		      const char *opt, const char *par)
{
	const struct sim_workload *w = r->w;
	const struct sim_config *f = sim_plan_framework(r->req);
	enum mdl_precision p = w->job.precision;
	const char *ot = optimizer_type(w->job.optimizer);

	fprintf(fp, "{\n");
	fprintf(fp, "  \"train_micro_batch_size_per_gpu\": %llu,\n",
		(unsigned long long)o->micro_batch);
	fprintf(fp, "  \"gradient_accumulation_steps\": %llu,\n", (unsigned long long)o->grad_accum);
	fprintf(fp, "  \"train_batch_size\": %llu,\n",
		(unsigned long long)(o->micro_batch * o->grad_accum * o->layout.dp));
	fprintf(fp, "  \"bf16\": {\"enabled\": %s},\n",
		p == MDL_BF16_MIXED || p == MDL_BF16 ? "true" : "false");
	fprintf(fp, "  \"fp16\": {\"enabled\": %s},\n", p == MDL_FP16_MIXED ? "true" : "false");
	/* PyTorch's foreach AdamW: no optimizer section, so Hugging Face's Trainer hands DeepSpeed
	 * its own (adamw_torch; transformers integrations/deepspeed.py builds one only when the
	 * config names none) instead of DeepSpeed's fused kernel */
	if (ot && !(f->opt_foreach && !strcmp(o->policy, "gpu")))
		fprintf(fp, "  \"optimizer\": {\"type\": \"%s\"},\n", ot);
	/* the plan clips the gradients' global norm before each step unless --clip-grad no, as
	 * Hugging Face's Trainer does at max_grad_norm 1.0, which it hands to DeepSpeed as
	 * gradient_clipping; DeepSpeed's own default is 0 (no clipping) */
	fprintf(fp, "  \"gradient_clipping\": %s,\n", f->no_clip_grad ? "0.0" : "1.0");
	fprintf(fp, "  \"zero_optimization\": {\n    \"stage\": %d,\n", stage);
	bool nvme = opt && !strcmp(opt, "nvme");
	/* Twin-Flow's ratio where the option keeps part of the optimizer on the GPUs; "%.6g"
	 * writes back the ratio the plan ran (plan.c, twin_ratio) */
	char twin[48] = "";
	if (o->params_on_gpu && o->twin_gpu > 0)
		snprintf(twin, sizeof twin, ", \"ratio\": %.6g", 1 - o->twin_gpu);
	if (opt) /* --swap-pipeline: the swapper's pipeline the plan simulated */
		fprintf(
		    fp,
		    "    \"offload_optimizer\": {\"device\": \"%s\"%s, \"pin_memory\": true%s%s%s},"
		    "\n",
		    opt, nvme ? ", \"nvme_path\": \"/local_nvme\"" : "",
		    nvme && f->swap_read_ahead ? ", \"pipeline_read\": true" : "",
		    nvme && f->swap_write_behind ? ", \"pipeline_write\": true" : "", twin);
	if (par && !strcmp(par, "nvme")) /* the swap buffers the plan counted in DRAM (step.h) */
		fprintf(fp, "    \"offload_param\": {\"device\": \"nvme\", \"nvme_path\": "
			    "\"/local_nvme\", \"pin_memory\": true, \"buffer_count\": %u, "
			    "\"buffer_size\": %.0f, \"max_in_cpu\": %.0f},\n",
			f->param_buffers ? f->param_buffers : STEP_PARAM_BUFFERS,
			f->param_buffer_size > 0
				? f->param_buffer_size
				: step_param_buffer_elements(&r->w->arch, &r->w->job, o->layout.dp),
			f->max_in_cpu);
	else if (par)
		fprintf(fp, "    \"offload_param\": {\"device\": \"%s\", \"pin_memory\": true},\n",
			par);
	if ((f->sub_group > 0 || twin[0]) && stage == 3) /* what Twin-Flow's ratio counts */
		fprintf(fp, "    \"sub_group_size\": %.0f,\n", step_sub_group(f));
	if (step_prefetch(f) == 1 && stage == 3) /* --prefetch 1: nothing gathered ahead */
		fprintf(fp, "    \"stage3_prefetch_bucket_size\": 0,\n");
	fprintf(fp, "    \"reduce_bucket_size\": %.0f,\n", reduce_bucket(r, o));
	fprintf(fp, "    \"overlap_comm\": %s\n  }", f->no_grad_overlap ? "false" : "true");
	if (par && !strcmp(par, "nvme"))
		/* the settings calibrate's fio jobs measure the drives with (--bs=1M --iodepth=32) */
		fprintf(fp, ",\n  \"aio\": {\"block_size\": 1048576, \"queue_depth\": 32, "
			    "\"single_submit\": false, \"overlap_events\": true}");
	/* checkpoints in DRAM, as the option ran: deepspeed.checkpointing moves them only with
	 * partition_activations on (checkpointing.py before 2026), a no-op at one TP rank */
	if (o->ckpt_in_dram)
		fprintf(fp, ",\n  \"activation_checkpointing\": {\"partition_activations\": true, "
			    "\"cpu_checkpointing\": true}");
	fprintf(fp, "\n}\n");
}

/*
 * The model's shape beyond its sizes, in Megatron-LM's terms (megatron/training/arguments.py and
 * TransformerConfig), whose defaults are GPT-2's: LayerNorm, a GeLU MLP, learned positions,
 * biases on every linear, the output layer tied to the embedding and dropout 0.1. Each flag
 * below says where the model differs, so the run builds the model that was planned (the
 * sizes, activations and dropout masks the prediction counts); the tokenizer, which sets the
 * vocabulary, and the rotary base stay the user's.
 */
static void arch_args(FILE *fp, const struct mdl_arch *a, uint64_t seq)
{
	if (!a->norm_bias)
		fprintf(fp, " \\\n  --normalization RMSNorm");
	else if (a->norm_1p) /* Nemotron's LayerNorm1P */
		fprintf(fp, " \\\n  --apply-layernorm-1p");
	if (a->squared_relu)
		fprintf(fp, " --squared-relu");
	if (a->quick_glu) /* gpt-oss's experts, as NVIDIA's gpt-oss recipes for Megatron say */
		fprintf(fp,
			" --quick-geglu --glu-linear-offset 1.0 --activation-func-clamp-value %g",
			a->glu_limit);
	else if (a->gated_mlp)
		fprintf(fp, " --swiglu");
	if (a->learned_positions) /* the table the model was planned with, and room for seq */
		fprintf(fp, " \\\n  --max-position-embeddings %llu",
			(unsigned long long)(a->positions > seq ? a->positions : seq));
	else
		fprintf(fp, " \\\n  --position-embedding-type rope --max-position-embeddings %llu",
			(unsigned long long)seq);
	if (mdl_arch_rotary(a) && a->rotary_fraction > 0 && a->rotary_fraction < 1)
		fprintf(fp, " --rotary-percent %g", a->rotary_fraction);
	if (!a->qkv_bias && !a->o_bias && !a->mlp_bias)
		fprintf(fp, " --disable-bias-linear");
	else if (a->qkv_bias && !a->o_bias && !a->mlp_bias)
		fprintf(fp, " --disable-bias-linear --add-qkv-bias");
	if (!a->tied)
		fprintf(fp, " \\\n  --untie-embeddings-and-output-weights");
	bool mla = a->q_lora_rank || a->kv_lora_rank;
	if (mla) {
		/* multi-head latent attention: its heads score on qk_nope + qk_rope dimensions, and
		 * its compressed latents are RMS-normed (DeepSeek's q_a_layernorm and
		 * kv_a_layernorm: Megatron's --qk-layernorm under MLA) */
		fprintf(fp, " \\\n  --multi-latent-attention --qk-layernorm");
		if (a->q_lora_rank)
			fprintf(fp, " --q-lora-rank %llu", (unsigned long long)a->q_lora_rank);
		fprintf(fp, " --kv-lora-rank %llu \\\n  --qk-head-dim %llu "
			    "--qk-pos-emb-head-dim %llu --v-head-dim %llu",
			(unsigned long long)a->kv_lora_rank,
			(unsigned long long)(a->head_dim - a->qk_rope_dim),
			(unsigned long long)a->qk_rope_dim, (unsigned long long)a->v_head_dim);
	} else if (a->head_dim * a->heads != a->hidden) {
		fprintf(fp, " \\\n  --kv-channels %llu", (unsigned long long)a->head_dim);
	}
	if (a->qk_norm && !mla)
		fprintf(fp, " --qk-layernorm");
	if (a->attn_sinks) /* a learned sink logit per head (GptOssAttention's sinks) */
		fprintf(fp, " --softmax-type learnable");
	/* sliding-window attention: transformers hands flash-attn window_size (W - 1, W - 1) under
	 * a causal mask (modeling_flash_attention_utils.py), W keys with the query's own, which is
	 * Megatron-Core's --window-size (W - 1, 0); where some layers attend fully, one in every N
	 * (--window-attn-skip-freq N: N - 1 windowed, then one full, as Gemma's and gpt-oss's
	 * patterns run: L / N full layers of L); megatron_cannot says when no N gives the count */
	if (a->sliding_window && a->sliding_layers) {
		fprintf(fp, " \\\n  --window-size \"(%llu,0)\"",
			(unsigned long long)(a->sliding_window - 1));
		uint64_t full = a->layers - a->sliding_layers;
		if (full)
			fprintf(fp, " --window-attn-skip-freq %llu",
				(unsigned long long)(a->layers / full));
	}
	fprintf(fp, " \\\n  --attention-dropout %g --hidden-dropout %g", a->attn_dropout,
		a->resid_dropout);
}

/* Why Megatron-LM's arguments cannot build the model as planned (NULL: they can): a GELU-gated
 * MLP (--swiglu gates by SiLU; --quick-geglu is another function), a ReLU MLP (OPT: the plain
 * MLP is GELU unless --squared-relu), ALiBi (BLOOM: --position-embedding-type offers
 * learned_absolute, rope, mrope, relative and none), a norm on the embeddings (BLOOM), norms
 * after attention and the MLP besides before them (Gemma-2 and 3), attention and MLP on one
 * input (Phi, Falcon), or windowed layers in no one-full-in-every-N pattern
 * (--window-attn-skip-freq N, N = layers / full layers, rounded down, giving as many) [A:
 * megatron/training/arguments.py]. */
static const char *megatron_cannot(const struct mdl_arch *a)
{
	uint64_t full = a->layers - a->sliding_layers;
	if (a->relu_mlp)
		return "its MLP's activation is ReLU, which Megatron-LM's arguments cannot state: "
		       "the plain MLP is GELU, or squared ReLU with --squared-relu";
	if (a->alibi)
		return "it places tokens by ALiBi attention biases, which Megatron-LM's "
		       "--position-embedding-type cannot state";
	if (a->embed_norm)
		return "it normalises its token embeddings, which Megatron-LM's arguments cannot "
		       "state";
	if (a->geglu)
		return "its MLP is gated by GELU (GeGLU), which Megatron-LM's arguments cannot "
		       "state: --swiglu gates by SiLU";
	if (a->norms_per_layer == 4)
		return "its layers normalise after attention and the MLP as well as before, "
		       "which Megatron-LM's arguments cannot state";
	if (a->norms_per_layer == 1)
		return "its attention and MLP read the same input (a parallel block), which "
		       "Megatron-LM's arguments cannot state";
	if (a->sliding_window && a->sliding_layers && full && a->layers / (a->layers / full) != full)
		return "its sliding-window layers follow no one-full-in-every-N pattern that "
		       "Megatron-LM's --window-attn-skip-freq can state";
	return NULL;
}

/* Megatron-LM's arguments for a GPU-only layout. */
static void megatron_args(FILE *fp, const struct rpt_plan *r, const struct sim_option *o)
{
	const struct mdl_arch *a = &r->w->arch;
	const struct mdl_layout *l = &o->layout;
	const struct sim_config *f = sim_plan_framework(r->req);
	enum mdl_precision p = r->w->job.precision;

	fprintf(fp, " \\\n  --tensor-model-parallel-size %u --pipeline-model-parallel-size %u", l->tp,
		l->pp);
	bool ends;
	mdl_layout_splits(a, l->pp, mdl_layout_vp(l), &ends);
	if (ends) /* the end chunks a layer lighter: the embedding and the loss count as one */
		fprintf(fp, " \\\n  --account-for-embedding-in-pipeline-split "
			    "--account-for-loss-in-pipeline-split");
	if (l->vp > 1 && ends)
		fprintf(fp, " \\\n  --num-virtual-stages-per-pipeline-rank %u", l->vp);
	else if (l->vp > 1)
		fprintf(fp, " \\\n  --num-layers-per-virtual-pipeline-stage %llu",
			(unsigned long long)(a->layers / (l->pp * l->vp)));
	if (l->sp)
		fprintf(fp, " \\\n  --sequence-parallel%s",
			f->tp_comm_overlap ? " --tp-comm-overlap" : "");
	/* ZeRO-1 is Megatron-Core's distributed optimizer; ZeRO-2 and 3 shard the gradients and
	 * the weights too, which only Megatron-FSDP does (its optim_grads and optim_grads_params
	 * strategies; the flags the Megatron-Core guide's "Megatron FSDP" page lists, and the
	 * fsdp_dtensor checkpoints arguments.py asserts): the distributed optimizer alone would
	 * keep every weight and gradient of the rank's model-parallel share */
	if (l->zero == 1)
		fprintf(fp, " \\\n  --use-distributed-optimizer%s",
			f->overlap_param_gather ? " --overlap-param-gather" : "");
	else if (l->zero >= 2)
		fprintf(fp,
			" \\\n  --use-megatron-fsdp --data-parallel-sharding-strategy %s "
			"--use-distributed-optimizer \\\n  --no-gradient-accumulation-fusion "
			"--ckpt-format fsdp_dtensor%s",
			l->zero == 3 ? "optim_grads_params" : "optim_grads",
			l->zero == 3 && !f->no_grad_overlap ? " --overlap-param-gather" : "");
	fprintf(fp, " \\\n  --micro-batch-size %llu --global-batch-size %llu --seq-length %llu",
		(unsigned long long)o->micro_batch, (unsigned long long)o->sequences_per_step,
		(unsigned long long)r->w->job.seq);
	fprintf(fp, " \\\n  --num-layers %llu --hidden-size %llu --ffn-hidden-size %llu "
		    "--num-attention-heads %llu",
		(unsigned long long)a->layers, (unsigned long long)a->hidden,
		(unsigned long long)a->intermediate, (unsigned long long)a->heads);
	if (a->kv_heads != a->heads)
		fprintf(fp, " \\\n  --group-query-attention --num-query-groups %llu",
			(unsigned long long)a->kv_heads);
	arch_args(fp, a, r->w->job.seq);
	if (a->experts)
		fprintf(fp, " \\\n  --num-experts %u --moe-router-topk %u --moe-ffn-hidden-size %llu",
			a->experts, a->experts_per_tok, (unsigned long long)a->moe_intermediate);
	if (a->experts && a->moe_layers && a->moe_layers < a->layers)
		/* the dense layers first, as DeepSeek's first_k_dense_replace places them */
		fprintf(fp, " \\\n  --moe-layer-freq '([0]*%llu+[1]*%llu)'",
			(unsigned long long)(a->layers - a->moe_layers),
			(unsigned long long)a->moe_layers);
	if (a->experts && a->shared_experts)
		fprintf(fp, " --moe-shared-expert-intermediate-size %llu",
			(unsigned long long)a->shared_intermediate);
	if (a->experts && r->w->job.grouped_experts)
		fprintf(fp, " --moe-grouped-gemm");
	if (mdl_layout_ep(l) > 1)
		fprintf(fp, " \\\n  --expert-model-parallel-size %u", l->ep);
	if (f->ep_overlap && sim_ep_overlap_allows(l, o->recompute))
		fprintf(fp, " \\\n  --overlap-moe-expert-parallel-comm --delay-wgrad-compute");
	if (mdl_layout_ep(l) > 1 && f->shared_overlap)
		fprintf(fp, " \\\n  --moe-shared-expert-overlap");
	if (mdl_layout_ep(l) > 1 && f->dispatcher != SIM_DISPATCH_ALLTOALL)
		fprintf(fp,
			" \\\n  --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend %s",
			sim_dispatcher_name(f));
	if (mdl_layout_ep(l) > 1 && f->dispatcher != SIM_DISPATCH_ALLTOALL && f->dispatcher_sms)
		fprintf(fp, " --moe-flex-dispatcher-num-sms %u", f->dispatcher_sms);
	if (mdl_layout_etp(l) < l->tp)
		fprintf(fp, " \\\n  --expert-tensor-parallel-size %u", mdl_layout_etp(l));
	if (mdl_layout_cp(l) > 1)
		fprintf(fp, " \\\n  --context-parallel-size %u", l->cp);
	if (p == MDL_BF16_MIXED || p == MDL_BF16)
		fprintf(fp, " \\\n  --bf16");
	else if (p == MDL_FP16_MIXED)
		fprintf(fp, " \\\n  --fp16");
	else if (p == MDL_FP8) /* the linear layers in FP8 (Transformer Engine), the rest bf16 */
		fprintf(fp, " \\\n  --bf16 --fp8-format hybrid");
	if (o->recompute == MDL_RC_FULL && o->recompute_layers)
		fprintf(fp,
			" \\\n  --recompute-granularity full --recompute-method block "
			"--recompute-num-layers %u",
			o->recompute_layers);
	else if (o->recompute == MDL_RC_FULL)
		fprintf(fp, " \\\n  --recompute-granularity full --recompute-method uniform "
			    "--recompute-num-layers 1");
	else if (o->recompute == MDL_RC_SELECTIVE)
		fprintf(fp, " \\\n  --recompute-granularity selective");
	if (o->recompute == MDL_RC_SELECTIVE && mdl_job_rc_modules_named(&r->w->job)) {
		char mods[64]; /* Megatron-LM takes the list space-separated */
		mdl_rc_modules_str(r->w->job.recompute_modules, ' ', mods, sizeof mods);
		fprintf(fp, " --recompute-modules %s", mods);
	}
	if (f->act_offload && f->act_offload_layers)
		fprintf(fp, " \\\n  --cpu-offloading --cpu-offloading-num-layers %u",
			f->act_offload_layers);
	/* with --bf16 Megatron-LM accumulates and reduces fp32 main grads unless told
	 * --grad-reduce-in-bf16 (arguments.py), so a plan with gradients in the weights' dtype says
	 * so; fp16 keeps fp16 gradients unless told fp32 */
	bool bf16 = p == MDL_BF16_MIXED || p == MDL_BF16 || p == MDL_FP8;
	if (r->w->job.grad_dtype == MDL_GRAD_FP32)
		fprintf(fp, " \\\n  --accumulate-allreduce-grads-in-fp32");
	else if (bf16)
		fprintf(fp, " \\\n  --grad-reduce-in-bf16");
	/* Megatron-LM fuses SwiGLU unless told not to: the plan's eager one keeps act(gate) */
	if (r->w->arch.gated_mlp && !r->w->arch.quick_glu && !r->w->job.fused_glu)
		fprintf(fp, " \\\n  --no-bias-swiglu-fusion");
	/* Transformer Engine's FusedAdam, which stores the masters' remainders from TE 2.1 */
	if (r->w->job.master == MDL_MASTER_REMAINDER)
		fprintf(fp, " \\\n  --use-precision-aware-optimizer");
	/* Megatron-Core's cross-entropy runs unfused unless told (--cross-entropy-loss-fusion) */
	if (o->loss == MDL_LOSS_VOCAB_PARALLEL_FUSED)
		fprintf(fp, " \\\n  --cross-entropy-loss-fusion");
	/* Megatron clips at 1.0 by default (--clip-grad), as the plan did unless --clip-grad no */
	if (f->no_clip_grad)
		fprintf(fp, " \\\n  --clip-grad 0.0");
	fprintf(fp, "%s\n", f->no_grad_overlap ? "" : " \\\n  --overlap-grad-reduce");
}

/* The `tierplan simulate` flags that reproduce option o (the DeepSpeed ones come from the
 * emitted config, the framework's settings it does not carry from the plan's). */
static void simulate_line(FILE *fp, const struct rpt_plan *r, const struct sim_option *o,
			  bool ds)
{
	const struct sim_workload *w = r->w;
	const struct mdl_hw *hw = r->hw;

	/* the catalog's name where it names the same file, else the file */
	char path[4096], name[96], e[256];
	bool named = cfg_model_resolve(r->model_name, path, sizeof path, name, sizeof name, NULL,
				       e, sizeof e) == 0 &&
		     strcmp(path, r->model_path) == 0;
	fprintf(fp, "tierplan simulate --model %s --seq %llu --gpus %u --gpu %s --host %s",
		named ? r->model_name : r->model_path, (unsigned long long)w->job.seq, o->gpus,
		hw->gpu.name, hw->host.name);
	/* a node of other than the host's slots, and memory kept free, as planned */
	if (hw->gpus_per_node != (uint32_t)hw->host.gpu_slots)
		fprintf(fp, " --gpus-per-node %u", hw->gpus_per_node);
	if (hw->gpu_headroom > 0)
		fprintf(fp, " --gpu-headroom %g", hw->gpu_headroom);
	if (w->job.method != MDL_FULL) {
		char t[64];
		fprintf(fp, " --method %s --lora-rank %u --lora-targets %s",
			mdl_method_name(w->job.method), w->job.lora_rank,
			mdl_targets_str(w->job.lora_targets, t, sizeof t));
		if (w->job.method == MDL_QLORA)
			fprintf(fp, " --quant %s", mdl_quant_name(w->job.quant));
		if (mdl_job_upcast(&w->job) != MDL_UPCAST_NONE)
			fprintf(fp, " --kbit-upcast %s", mdl_upcast_name(w->job.upcast));
		if (w->job.quant_head)
			fprintf(fp, " --quant-head yes");
		if (w->job.quant_fp16 != w->job.quant_head) /* not what auto makes of the head */
			fprintf(fp, " --quant-from %s", mdl_quant_from_name(w->job.quant_fp16));
		if (w->job.plain_nf4)
			fprintf(fp, " --double-quant no");
	}
	/* the DRAM the option bought, exactly: in GiB where it is whole GiB, else in bytes (a
	 * GH200's soldered 480 GB rounded to 447 GiB would be less than the node has, and 448
	 * more) */
	double gib = o->dram / 1073741824.0;
	fprintf(fp, " --attention %s --recompute %s --loss %s --dram %.0f%s%s",
		mdl_attention_name(w->job.attention), mdl_recompute_name(o->recompute),
		mdl_loss_name(o->loss), gib == floor(gib) ? gib : o->dram,
		gib == floor(gib) ? "GiB" : "", w->job.compile ? " --compile yes" : "");
	if (o->recompute_layers)
		fprintf(fp, " --recompute-layers %u", o->recompute_layers);
	if (o->recompute == MDL_RC_SELECTIVE && mdl_job_rc_modules_named(&w->job)) {
		char mods[64];
		mdl_rc_modules_str(w->job.recompute_modules, ',', mods, sizeof mods);
		fprintf(fp, " --recompute-modules %s", mods);
	}
	if (w->job.recompute_early_stop && o->recompute == MDL_RC_FULL)
		fprintf(fp, " --checkpoint-early-stop yes");
	if (w->job.upcast_in_model && mdl_loss_upcasts(o->loss))
		fprintf(fp, " --logits-upcast model"); /* moot where the option's loss is chunked */
	if (w->job.grouped_experts)
		fprintf(fp, " --moe-gemm grouped");
	if (w->job.eager_ops)
		fprintf(fp, " --pointwise eager");
	if (w->job.fused_qkv != w->arch.fused_qkv)
		fprintf(fp, " --fused-qkv %s", w->job.fused_qkv ? "yes" : "no");
	if (w->job.repeat_kv != mdl_act_repeat_kv_auto(&w->arch, &w->job))
		fprintf(fp, " --repeat-kv %s", w->job.repeat_kv ? "yes" : "no");
	if (w->job.fused_glu)
		fprintf(fp, " --swiglu fused");
	if (w->job.doc_tokens)
		fprintf(fp, " --doc-tokens %llu", (unsigned long long)w->job.doc_tokens);
	if (w->job.grad_dtype != MDL_GRAD_PARAM)
		fprintf(fp, " --grad-dtype %s", mdl_grad_dtype_name(w->job.grad_dtype));
	if (w->job.method != MDL_FULL && w->job.lora_dropout > 0)
		fprintf(fp, " --lora-dropout %g", w->job.lora_dropout);
	if (w->job.method != MDL_FULL && w->job.lora_fp32)
		fprintf(fp, " --lora-dtype %s", mdl_lora_dtype_name(true));
	if (w->job.method != MDL_FULL && w->job.dora)
		fprintf(fp, " --dora yes");
	if (w->job.method != MDL_FULL && w->job.fused_lora)
		fprintf(fp, " --lora-kernels %s", mdl_lora_kernels_name(true));
	/* the drives the option ran with: those it used, else the plan's (a host-tier placement
	 * depends on whether there are any) */
	if (o->flash_count)
		fprintf(fp, " --flash %s:%u", hw->flash.name, o->flash_count);
	else if (o->kind != SIM_GPU_ONLY && !hw->flash_count)
		fprintf(fp, " --flash none");
	else if (o->kind != SIM_GPU_ONLY)
		fprintf(fp, " --flash %s:%u", hw->flash.name, hw->flash_count);
	fprintf(fp, " --tokens %.0f", w->tokens);
	if (hw->prof.file[0])
		fprintf(fp, " --profile %s", hw->prof.file);
	/* the framework's settings the option ran with that ds_config.json does not carry */
	const struct sim_config *f = sim_plan_framework(r->req);
	bool gpu = !strcmp(o->policy, "gpu");
	if (step_prefetch(f) != STEP_PREFETCH)
		fprintf(fp, " --prefetch %u", f->prefetch);
	if (f->opt_foreach && gpu)
		fprintf(fp, " --foreach-optimizer yes");
	if (f->tp_comm_overlap && o->layout.sp)
		fprintf(fp, " --tp-comm-overlap yes");
	if (f->ep_overlap && gpu && sim_ep_overlap_allows(&o->layout, o->recompute))
		fprintf(fp, " --ep-overlap yes");
	if (f->shared_overlap && gpu && mdl_layout_ep(&o->layout) > 1)
		fprintf(fp, " --shared-expert-overlap yes");
	if (f->dispatcher != SIM_DISPATCH_ALLTOALL && mdl_layout_ep(&o->layout) > 1)
		fprintf(fp, " --moe-dispatcher %s", sim_dispatcher_name(f));
	if (f->dispatcher != SIM_DISPATCH_ALLTOALL && mdl_layout_ep(&o->layout) > 1 &&
	    f->dispatcher_sms)
		fprintf(fp, " --moe-dispatcher-sms %u", f->dispatcher_sms);
	if (f->opt_in_bwd)
		fprintf(fp, " --optimizer-in-backward yes");
	if (f->act_offload && gpu)
		fprintf(fp, " --activation-offload yes");
	if (f->act_offload && gpu && f->act_offload_layers)
		fprintf(fp, " --activation-offload-layers %u", f->act_offload_layers);
	bool fp8_gather = f->fp8_all_gather && gpu && o->layout.zero == 3;
	if (fp8_gather)
		fprintf(fp, " --fp8-all-gather yes");
	/* torchao's recipe goes without saying only beside its FP8 all-gather */
	if (w->job.precision == MDL_FP8 && w->job.fp8_recipe == MDL_FP8_TORCHAO && !fp8_gather)
		fprintf(fp, " --fp8-recipe torchao");
	if (ds) {
		fprintf(fp, " --deepspeed ds_config.json\n");
		return;
	}
	if (f->no_clip_grad)
		fprintf(fp, " --clip-grad no");
	if (w->job.master == MDL_MASTER_REMAINDER && gpu)
		fprintf(fp, " --master-weights remainder");
	if (f->no_grad_overlap)
		fprintf(fp, " --overlap-grad-reduce no");
	if (f->overlap_param_gather && gpu && o->layout.zero == 1)
		fprintf(fp, " --overlap-param-gather yes");
	if (f->bwd_prefetch_post && gpu && o->layout.zero == 3) /* FSDP FULL_SHARD's setting */
		fprintf(fp, " --backward-prefetch post");
	if (f->ckpt_outside && gpu && o->layout.zero == 3)
		fprintf(fp, " --checkpoint-wrap outside");
	if (sim_plan_grad_sync_last(r->req, o))
		fprintf(fp, " --grad-sync last");
	if (f->reduce_bucket > 0)
		fprintf(fp, " --reduce-bucket %.0f", f->reduce_bucket);
	if (mdl_layout_etp(&o->layout) < o->layout.tp)
		fprintf(fp, " --expert-tp %u", mdl_layout_etp(&o->layout));
	fprintf(fp, " --policy %s --tp %u --pp %u --cp %u --zero %u --interleave %u --ep %u "
		    "--sequence-parallel %s --batch %llu --grad-accum %llu --precision %s "
		    "--optimizer %s\n",
		o->policy, o->layout.tp, o->layout.pp, mdl_layout_cp(&o->layout), o->layout.zero,
		o->layout.vp ? o->layout.vp : 1, mdl_layout_ep(&o->layout), o->layout.sp ? "yes" : "no",
		(unsigned long long)o->micro_batch, (unsigned long long)o->grad_accum,
		mdl_precision_name(w->job.precision), mdl_optimizer_name(w->job.optimizer));
}

/*
 * What the training script sets for LoRA and QLoRA, which neither file holds: PEFT's LoraConfig
 * (Unsloth's get_peft_model for --lora-kernels unsloth, its checkpointing "unsloth" where the
 * plan recomputes and offloads each layer's input, True where it recomputes alone) with the
 * planned rank, targets (in the Llama family's module names) and dropout, embed and head
 * trained whole as modules_to_save; the base loaded as planned: bitsandbytes NF4 with double
 * quantisation and bf16 compute, its packed weights stored as bf16 where ZeRO-3 shards them
 * (PEFT's DeepSpeed guide: bnb_4bit_quant_storage), or a GPTQ checkpoint with the ExLlama kernels
 * off, as the plan timed it [A: PEFT and transformers documentation].
 */
static void adapters(FILE *fp, const struct rpt_plan *r, const struct sim_option *o, bool ds)
{
	static const struct {
		unsigned bit;
		const char *module;
	} names[] = {{MDL_T_Q, "q_proj"},	{MDL_T_K, "k_proj"},   {MDL_T_V, "v_proj"},
		     {MDL_T_O, "o_proj"},	{MDL_T_GATE, "gate_proj"}, {MDL_T_UP, "up_proj"},
		     {MDL_T_DOWN, "down_proj"}};
	const struct mdl_job *j = &r->w->job;
	unsigned t = j->lora_targets;

	/* Unsloth's get_peft_model takes LoraConfig's arguments and patches its fused functions
	 * in where lora_dropout is 0 (unsloth/models/llama.py) */
	fprintf(fp, "## Adapters\n\nThe training script sets them, not a configuration file. With "
		    "%s(%sr=%u, target_modules=[",
		j->fused_lora ? "Unsloth: `FastLanguageModel.get_peft_model" : "PEFT: `LoraConfig",
		j->fused_lora ? "model, " : "", j->lora_rank);
	int n = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (t & names[i].bit)
			fprintf(fp, "%s\"%s\"", n++ ? ", " : "", names[i].module);
	fprintf(fp, "]");
	if (t & (MDL_T_EMBED | MDL_T_HEAD))
		fprintf(fp, ", modules_to_save=[%s%s%s]", t & MDL_T_EMBED ? "\"embed_tokens\"" : "",
			(t & MDL_T_EMBED) && (t & MDL_T_HEAD) ? ", " : "",
			t & MDL_T_HEAD ? "\"lm_head\"" : "");
	if (j->lora_dropout > 0)
		fprintf(fp, ", lora_dropout=%g", j->lora_dropout);
	if (j->dora)
		fprintf(fp, ", use_dora=True");
	if (j->fused_lora) { /* its fused functions run only without dropout */
		const struct sim_config *f = sim_plan_framework(r->req);
		bool full = o->recompute == MDL_RC_FULL, offload = f->act_offload && full;
		fprintf(fp, ", lora_dropout=0, use_gradient_checkpointing=%s",
			offload ? "\"unsloth\"" : full ? "True" : "False");
	}
	fprintf(fp, ")` (the Llama family's module names; other families name their projections "
		    "otherwise)");
	if (j->method == MDL_QLORA && mdl_job_gptq(j))
		fprintf(fp, ", on the GPTQ checkpoint loaded with `GPTQConfig(bits=4, "
			    "use_exllama=False)`, the kernels the plan timed");
	else if (j->method == MDL_QLORA && j->quant == MDL_QUANT_NF4_TORCHAO)
		fprintf(fp, ", planned with the base as torchao's NF4 tensors (torchtune's `qlora_` "
			    "model builders), dequantised %s, as the plan timed them",
			j->compile ? "by one fused kernel under `compile: True`"
				   : "eagerly (`compile: False`)");
	else if (j->method == MDL_QLORA)
		fprintf(fp, ", on the base loaded with `BitsAndBytesConfig(load_in_4bit=True, "
			    "bnb_4bit_quant_type=\"nf4\", bnb_4bit_use_double_quant=True, "
			    "bnb_4bit_compute_dtype=torch.bfloat16%s)`",
			ds && o->layout.zero == 3 ? ", bnb_4bit_quant_storage=torch.bfloat16" : "");
	if (j->lora_fp32)
		fprintf(fp, "; planned with the adapters in fp32, as PEFT 0.12 and later keep a "
			    "16-bit base's (`--lora-dtype fp32`)");
	else if (mdl_job_weight_bytes(j) < 4)
		fprintf(fp, "; planned with the adapters in the base's dtype: PEFT 0.12 and later "
			    "upcast them to fp32 unless `get_peft_model(model, config, "
			    "autocast_adapter_dtype=False)` (`--lora-dtype fp32` plans that)");
	if (mdl_job_upcast(j) == MDL_UPCAST_NORMS)
		fprintf(fp, "; planned with the norms in fp32, as TRL's SFTTrainer leaves them "
			    "(`--kbit-upcast norms`)");
	else if (mdl_job_upcast(j) == MDL_UPCAST_ALL)
		fprintf(fp, "; planned with every unquantised parameter in fp32, as PEFT's "
			    "`prepare_model_for_kbit_training` leaves them (`--kbit-upcast all`)");
	fprintf(fp, ".\n\n");
}

/* What launch.sh leaves to the user and how the run differs from the plan: Megatron-FSDP for
 * ZeRO-2 and 3, and Megatron-LM's own loss where the plan took another. */
static void megatron_run(FILE *fp, const struct sim_option *o)
{
	fprintf(fp, "`launch.sh` holds Megatron-LM's arguments for the layout; add your data, "
		    "tokenizer and optimizer arguments.%s",
		o->layout.zero >= 2
			? " ZeRO's gradient (and weight) sharding runs as Megatron-FSDP, "
			  "`--use-megatron-fsdp` (Megatron-Core 0.14 and later; `--use-custom-fsdp` "
			  "before), whose checkpoints are `fsdp_dtensor`."
			: "");
	if (!mdl_loss_vocab_parallel(o->loss))
		fprintf(fp, " Megatron-LM computes its own vocab-parallel cross-entropy, not the %s "
			    "loss planned%s (plan with `--loss vocab-parallel`, or "
			    "`vocab-parallel-fused` with `--cross-entropy-loss-fusion`, to predict "
			    "it).",
			mdl_loss_name(o->loss),
			o->loss == MDL_LOSS_FULL
				? ": its fp32 softmax turns into the gradient in place, so the GPUs "
				  "holding the head hold up to 8 B a logit less than predicted here"
				: "");
	fprintf(fp, "\n\n");
}

static void readme(FILE *fp, const struct rpt_plan *r, const struct sim_option *o, int idx,
		   bool ds, bool megatron, const char *why, const struct sim_option *dso)
{
	double gib = 1073741824.0;
	/* the GPU peak of what the files run: DeepSpeed's (dso) where its buckets differ */
	double peak = dso ? dso->peak_gpu : o->peak_gpu;

	fprintf(fp, "# %s on %u x %s: option %d of tierplan's plan\n\n", r->model_name, o->gpus,
		r->hw->gpu.name, idx);
	fprintf(fp, "%s, micro-batch %llu, %llu micro-batch%s per step (%llu sequence%s of %llu "
		    "tokens), recompute %s, %s loss.\n\n",
		o->name, (unsigned long long)o->micro_batch, (unsigned long long)o->grad_accum,
		o->grad_accum == 1 ? "" : "es", (unsigned long long)o->sequences_per_step,
		o->sequences_per_step == 1 ? "" : "s", (unsigned long long)r->w->job.seq,
		mdl_recompute_name(o->recompute), mdl_loss_name(o->loss));
	fprintf(fp, "## Predicted\n\n| quantity | value |\n|---|---|\n");
	fprintf(fp, "| step | %.2f s |\n| throughput | %.0f tokens/s |\n", o->step_seconds,
		o->tokens_per_second);
	fprintf(fp, "| GPU memory peak | %.1f GiB per GPU%s |\n", peak / gib,
		dso ? " (as DeepSpeed holds it, below)" : "");
	fprintf(fp, "| DRAM peak | %.1f GiB per node (%.0f GiB bought) |\n", o->peak_dram / gib,
		o->dram / gib);
	if (o->flash_count)
		fprintf(fp, "| flash peak | %.1f GiB per node on %u drive%s |\n",
			o->peak_flash / gib, o->flash_count, o->flash_count == 1 ? "" : "s");
	else
		fprintf(fp, "| flash | none |\n");
	char tok[32];
	fprintf(fp, "| runtime | %.2f h for %s tokens |\n", o->runtime_seconds / 3600.0,
		cfg_fmt_count(r->w->tokens, tok, sizeof tok));
	fprintf(fp, "| peak power | %.2f kW |\n| cost | $%.2f owned, $%.2f cloud |\n",
		o->peak_power_watts / 1000.0, o->cost_total, o->cost_cloud);
	struct cfg_band band, mem;
	const char *cat;
	if (rpt_step_band(o, &band, &cat))
		fprintf(fp,
			"| step, as published runs of its kind measured it | %.2f-%.2f s (90 %% of "
			"%d `%s` runs: %.2f-%.2fx the prediction) |\n",
			o->step_seconds * band.lo, o->step_seconds * band.hi, band.cases, cat,
			band.lo, band.hi);
	if (rpt_memory_band(&mem))
		fprintf(fp, "| GPU peak, as published runs measured it | %.1f-%.1f GiB (90 %% of %d "
			    "`gpu_memory` runs: %.2f-%.2fx) |\n",
			peak * mem.lo / gib, peak * mem.hi / gib, mem.cases, mem.lo,
			mem.hi);
	fputc('\n', fp);
	fprintf(fp, "## Run\n\n");
	char drives[96] = "";
	if (o->flash_count > 1) /* model/hw.c prices an array as DeepNVMe measures one */
		snprintf(drives, sizeof drives,
			 ", point `nvme_path` at a RAID-0 array of the %u drives", o->flash_count);
	else if (o->flash_count)
		snprintf(drives, sizeof drives, ", point `nvme_path` at the drive");
	if (ds)
		fprintf(fp, "`ds_config.json` holds the ZeRO stage, offloads, batch and precision; "
			    "`launch.sh` starts it with DeepSpeed's launcher. Put your training "
			    "script in place of `train.py` (a Hugging Face Trainer script takes "
			    "`--deepspeed ds_config.json` as well)%s, and keep gradient "
			    "checkpointing %s.%s\n\n",
			drives, o->recompute == MDL_RC_NONE ? "off" : "on",
			o->ckpt_in_dram
				? " The plan keeps the checkpoints in CPU memory "
				  "(`activation_checkpointing.cpu_checkpointing`), which only "
				  "`deepspeed.checkpointing` honours, as Megatron-DeepSpeed "
				  "checkpoints; a Hugging Face model keeps them on the GPU (plan "
				  "with `--cpu-checkpointing no` to price that)."
				: "");
	if (dso) {
		fprintf(fp, "The plan priced ZeRO-%u's gradients as Megatron-LM and FSDP hold "
			    "them, %.1f GiB a GPU at the peak; DeepSpeed reduces them through its "
			    "own bucket%s (%.0f MB at reduce_bucket_size %.0f, Hugging Face's "
			    "\"auto\": hidden_size squared), which the table above and the "
			    "simulate line below, reading ds_config.json, price: %.1f GiB.",
			o->layout.zero, o->peak_gpu / gib, o->layout.zero == 3 ? "" : "s",
			(o->layout.zero == 3 ? 1 : 2) * reduce_bucket(r, o) *
				mdl_job_act_bytes(&r->w->job) / 1e6,
			reduce_bucket(r, o), dso->peak_gpu / gib);
		if (!dso->fits)
			fprintf(fp, " **Run this way it does not fit the GPU** (%s): plan with "
				    "`--deepspeed ds_config.json` for DeepSpeed's own options.",
				dso->overflow);
		fprintf(fp, "\n\n");
	} else if (megatron)
		megatron_run(fp, o);
	else if (why)
		fprintf(fp, "tierplan writes no configuration for this option: %s. Run it with a "
			    "framework that does (%s); the prediction below is what to check a run "
			    "against.\n\n",
			why,
			why == trainer_why ? "the Hugging Face Trainer or accelerate on PyTorch "
					     "FSDP, without sync_each_batch"
			: o->layout.tp > 1 || o->layout.pp > 1
				? "NeMo or Megatron-Bridge, whose recipes run tensor and pipeline "
				  "layouts, LoRA among them"
				: "torchtune, or PyTorch FSDP, with CPU offload for the offload "
				  "policies");
	else if (!ds)
		fprintf(fp, "The %s policy models an aiDAPTIV+-style middleware, which is configured "
			    "through its vendor's tools: there is no public configuration file to "
			    "write. The prediction below is what to check a run against.\n\n",
			o->policy);
	if (r->w->job.method != MDL_FULL && (ds || (why && o->layout.tp == 1 && o->layout.pp == 1)))
		adapters(fp, r, o, ds);
	fprintf(fp, "## Check the prediction\n\nCompare the logged step time and "
		    "`torch.cuda.max_memory_allocated()` with the table above. To re-run the "
		    "prediction (add `--trace step.json` for the timeline):\n\n```sh\n");
	simulate_line(fp, r, o, ds);
	fprintf(fp, "```\n\nAssumptions: GEMMs at the GPU's sustained rate (a calibrated profile "
		    "replaces the catalog's figures), the host and drives of the plan's inputs, "
		    "and everything `tierplan plan` prints under \"inputs\".\n");
}

int rpt_plan_emit(const char *dir, bool force, const struct rpt_plan *r, int idx, char *files,
		  size_t nfiles, char *err, size_t errlen)
{
	const struct sim_plan *p = r->plan;
	struct rpt_file f;
	int rc, stage = 0; /* set by deepspeed_of where a ds_config is written */
	const char *opt, *par;

	if (idx < 0 || idx >= p->noptions) {
		snprintf(err, errlen, "--option: %d is not an option of this plan (0 to %d)", idx,
			 p->noptions - 1);
		return CFG_OUT_REFUSED;
	}
	const struct sim_option *o = &p->options[idx];
	if (!o->fits) {
		snprintf(err, errlen, "--option %d does not fit: nothing to emit", idx);
		return CFG_OUT_REFUSED;
	}
	/* DeepSpeed where the option is one of its layouts and its config can say what was
	 * planned; else Megatron-LM for a GPU-only layout it can run as planned; else README.md
	 * alone, saying why */
	bool dsl = deepspeed_of(o, &stage, &opt, &par), gpu = !strcmp(o->policy, "gpu");
	/* planned with Megatron-Core's deferred parameter all-gather, a ZeRO-1 layout is
	 * Megatron-LM's: DeepSpeed's ZeRO-1 gathers after the optimizer step */
	if (gpu && o->layout.zero == 1 && sim_plan_framework(r->req)->overlap_param_gather)
		dsl = false;
	const char *why = dsl ? cannot_express(r, true) : NULL;
	if (dsl && !why && trainer_only(r, o))
		why = trainer_why;
	bool ds = dsl && !why;
	if (!ds && gpu)
		why = cannot_express(r, false);
	if (!ds && gpu && !why && trainer_only(r, o))
		why = trainer_why;
	if (!ds && gpu && !why)
		why = megatron_cannot(&r->w->arch);
	bool megatron = !ds && gpu && !why;
	/* the option as the emitted DeepSpeed files run it, where the plan priced it otherwise */
	struct sim_option dso;
	const struct sim_option *as_ds = NULL;
	if (ds && ds_buckets_unpriced(r, o)) {
		if ((rc = as_deepspeed(r, o, &dso, err, errlen)))
			return rc;
		as_ds = &dso;
	}
	if ((rc = rpt_dir_prepare(dir, force, "--emit", err, errlen)))
		return rc;
	uint32_t per = r->hw->gpus_per_node ? r->hw->gpus_per_node : 1;
	uint32_t nodes = o->nodes ? o->nodes : 1, here = o->gpus < per ? o->gpus : per;

	if (ds) {
		if ((rc = rpt_file_open(&f, dir, "ds_config.json", "--emit", err, errlen)))
			return rc;
		ds_config(f.fp, r, o, stage, opt, par);
		if ((rc = rpt_file_close(&f, err, errlen)))
			return rc;
	}
	if (ds || megatron) {
		if ((rc = rpt_file_open(&f, dir, "launch.sh", "--emit", err, errlen)))
			return rc;
		fprintf(f.fp, "#!/bin/sh\n# %s: %u GPU%s on %u node%s (tierplan plan --emit)\n",
			o->name, o->gpus, o->gpus == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
		if (ds)
			fprintf(f.fp, "deepspeed --num_nodes %u --num_gpus %u train.py --deepspeed "
				      "ds_config.json\n",
				nodes, here);
		else {
			fprintf(f.fp, "torchrun --nnodes %u --nproc-per-node %u pretrain_gpt.py", nodes,
				here);
			megatron_args(f.fp, r, o);
		}
		if ((rc = rpt_file_close(&f, err, errlen)))
			return rc;
	}
	snprintf(files, nfiles, "README.md%s%s%s", ds || megatron ? ", launch.sh" : "",
		 ds ? ", ds_config.json" : "",
		 as_ds && !as_ds->fits
			 ? "; as DeepSpeed runs it the option does not fit the GPU: README.md "
			   "says by how much"
			 : "");
	if ((rc = rpt_file_open(&f, dir, "README.md", "--emit", err, errlen)))
		return rc;
	readme(f.fp, r, o, idx, ds, megatron, why, as_ds);
	return rpt_file_close(&f, err, errlen);
}
