/* act — see act.h. One item list; every total is a sum over it. */
#include "act.h"

#include <math.h>
#include <string.h>

/* Megatron's row-parallel projections (o_proj, down_proj): TP splits their input, and their
 * output is whole on every rank. */
static bool row_parallel(const struct mdl_tensor *t)
{
	return (t->target & (MDL_T_O | MDL_T_DOWN)) != 0;
}

static void item(struct mdl_act_item *out, int *n, const char *name, double bytes, bool core)
{
	out[*n] = (struct mdl_act_item){name, bytes, bytes, core, false};
	(*n)++;
}

/* What a norm keeps in the compute dtype: a fused kernel its input, an eager RMSNorm the
 * normalised value its weight product reads, which a frozen weight's product keeps not. */
static void norm_input(struct mdl_act_item *out, int *n, const char *name, double bytes,
		       bool frozen)
{
	item(out, n, name, bytes, false);
	if (frozen)
		out[*n - 1].kept = 0;
}

/* GPTQ's dequantised weights of one half of the layer, which torch.matmul keeps for the input
 * gradient (job.h, mdl_quant): kept whatever the tokens; their writing and reading are the
 * dequantisation's traffic (mdl_job_weight_passes), so the item moves no bytes of its own. */
static void dequantised(struct mdl_act_item *out, int *n, const char *name,
			const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool attn)
{
	double kept = mdl_job_dequant_kept(a, j, tp, attn);
	if (kept > 0)
		out[(*n)++] = (struct mdl_act_item){name, 0, kept, false, false};
}

/*
 * A linear layer's input of `elements` elements in the compute dtype (e bytes each). Under FP8
 * Transformer Engine's modules keep for the weight gradient the FP8 copy they cast the input to
 * for the forward GEMM, not the 16-bit input: te.Linear saves the quantized inputmat (its
 * row-wise data discarded, the column-wise FP8 transpose kept), te.LayerNormLinear and
 * te.LayerNormMLP their FP8 ln_out and the FP8 act_out FC2 reads, and GroupedLinear the
 * experts' FP8 inputs (transformer_engine/pytorch/module/linear.py, layernorm_linear.py,
 * layernorm_mlp.py: save_for_backward after input_quantizer; TE 2.x) [A: TE source]: 1 byte an
 * element. The 16-bit tensor the norm or activation wrote dies with the cast. torchao's float8
 * (Float8Linear's matmul_with_hp_or_float8_args saves input_hp) keeps the 16-bit input
 * (mdl_fp8_recipe torchao).
 */
static void gemm_input(struct mdl_act_item *out, int *n, const char *name, const struct mdl_job *j,
		       double e, double elements, bool kept)
{
	item(out, n, name, e * elements, false);
	if (!kept)
		out[*n - 1].kept = 0;
	else if (j->precision == MDL_FP8 && j->fp8_recipe == MDL_FP8_TE)
		out[*n - 1].kept = elements;
}

/* Whether adapted linear x reads an input another adapter of the layer read already: one
 * adapter sits on a fused q/k/v projection (job.fused_qkv), so its one lora_A, dropout and cast
 * read the layer's input once for all three (LitGPT's LoRAQKVLinear: F.linear(lora_dropout(x),
 * lora_A) with lora_A r x (the enabled projections) rows; PEFT on a fused qkv_proj) [A:
 * source]. *seen tracks the first. */
static bool shared_qkv_input(const struct mdl_job *j, const struct mdl_tensor *x, bool *seen)
{
	if (!j->fused_qkv || !(x->target & (MDL_T_Q | MDL_T_K | MDL_T_V)))
		return false;
	bool shared = *seen;
	*seen = true;
	return shared;
}

/* Whether an adapter casts its input: fp32 adapters (job.lora_fp32) on a 16-bit stream. */
static bool adapter_casts(const struct mdl_arch *a, const struct mdl_job *j)
{
	return mdl_job_adapter_bytes(j) != mdl_job_stream_bytes(a, j);
}

/*
 * Whether the dense linears of a layer with these targets keep the input they share for
 * backward. Autograd saves a matmul's input for the weight gradient alone: the generated code
 * guards each saved tensor with the gradient whose formula reads it, so mm and addmm keep mat1
 * only where mat2 (the weight) requires grad (tools/autograd/derivatives.yaml,
 * mm_mat2_backward; the guard as generated, pytorch/pytorch#97575) [A: source]. A full
 * fine-tune's linears keep their inputs; a LoRA base's frozen ones keep nothing, and its
 * adapter's lora_A keeps the input where it reads it itself (lora_dropout 0, and no cast to
 * fp32 adapters; with dropout it keeps dropout(x), the lora.dropout item, and a cast copy is
 * the lora.input item). Quantised bases: GPTQ's torch.matmul keeps both operands (matmul's one
 * formula for both gradients saves both, the same issue); bitsandbytes' MatMul4Bit kept its
 * input A although its backward never reads it until 0.43.2 (PR #1270, "delete useless buffered
 * activation", July 2024; bitsandbytes/autograd/_functions.py) [A: source]: --quant nf4-legacy;
 * torchao's LinearNF4 saves the weight alone (torchao/dtypes/nf4tensor.py) [A: source].
 * Unsloth's fused LoRA functions keep X (job.fused_lora), the down projection's input aside
 * (mlp_fused).
 * MLA's up-projections count as reading the layer's input (their targets are q and v). The
 * experts keep what their own items say.
 */
static bool inputs_kept(const struct mdl_arch *a, const struct mdl_job *j, unsigned targets)
{
	if (j->method == MDL_FULL)
		return true;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (!t->matmul || t->copies > 1 || !(t->target & targets))
			continue;
		/* Unsloth's fused LoRA keeps X, the adapters reading it in X's dtype */
		if ((t->target & j->lora_targets) && !(j->lora_dropout > 0) &&
		    (!adapter_casts(a, j) || mdl_job_lora_fused(a, j, t)))
			return true;
		if (mdl_job_quantised(j, t) && j->quant != MDL_QUANT_NF4 &&
		    j->quant != MDL_QUANT_NF4_TORCHAO)
			return true;
	}
	return false;
}

/* Whether the job's 4-bit linears keep their inputs on their autograd ctx: bitsandbytes'
 * MatMul4Bit before 0.43.2 (mdl_act_layer_held). */
static bool ctx_keeps_inputs(const struct mdl_job *j)
{
	return j->method == MDL_QLORA && j->quant == MDL_QUANT_NF4_LEGACY;
}

/* Whether a linear reading this input is a 4-bit one that keeps it on its autograd ctx, which
 * the graph holds past backward (mdl_act_layer_held), the experts' linears included; not where
 * Unsloth's fused LoRA functions run the linear (their fast_dequantize and matmul, the input in
 * save_for_backward). */
static bool held_by_graph(const struct mdl_arch *a, const struct mdl_job *j, unsigned targets)
{
	if (!ctx_keeps_inputs(j))
		return false;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if ((t->target & targets) && mdl_job_quantised(j, t) && !mdl_job_lora_fused(a, j, t))
			return true;
	}
	return false;
}

/* Marks the item just added as held by the graph where a legacy 4-bit linear reads it. */
static void mark_held(const struct mdl_arch *a, const struct mdl_job *j, struct mdl_act_item *it,
		      unsigned targets)
{
	it->held = it->kept > 0 && held_by_graph(a, j, targets);
}

/* The dtype of what a DoRA layer multiplies by the magnitude (job.dora): the base output (the
 * stream's), or under lora_dropout PEFT's base product again from the dropped input, as lora_B
 * writes (the compute dtype under autocast, else the adapters'): peft/tuners/lora/variants.py,
 * DoraLinearVariant.forward, base_result None unless the dropout is nn.Identity [A: source]. */
static double dora_base_bytes(const struct mdl_arch *a, const struct mdl_job *j)
{
	if (j->lora_dropout > 0)
		return mdl_job_lora_out_bytes(j);
	return mdl_job_stream_bytes(a, j);
}

/*
 * What DoRA keeps for backward beyond LoRA (job.dora), per adapted linear: its base output and
 * its adapters' output, the operands of (m - 1) x base and m x lora whose other operand, the
 * magnitude over the weight norm, has a gradient (PEFT's DoraLinearLayer.forward, torchtune's
 * DoRALinear.forward: the products save both operands) [A: source], as dora_base_bytes and
 * lora_B write them; under lora_dropout, PEFT's base product again keeps the weight it read
 * for its input gradient, the base's cast to x's dtype (the adapters'; under autocast its
 * compute-dtype cast), or dequantised (a quantised base), whatever the tokens. Row-parallel
 * outputs are whole on each TP rank, the others split, as the stream they join.
 */
static int dora_items(const struct mdl_arch *a, const struct mdl_job *j, double t, double rep,
		      struct mdl_act_item *out, int n)
{
	double sb = (double)j->seq * (double)j->micro_batch, ad = mdl_job_adapter_bytes(j);
	double p = mdl_job_lora_out_bytes(j), b = dora_base_bytes(a, j);
	double outs = 0, wcopy = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *x = &a->layer[i];
		if (!(x->target & j->lora_targets))
			continue;
		outs += sb * x->active * mdl_tensor_share(a, x) * (double)x->cols /
			(row_parallel(x) ? rep : t);
		bool cast = mdl_job_quantised(j, x) || mdl_job_weight_bytes(j) != ad;
		if (j->lora_dropout > 0 && cast)
			wcopy += (double)x->rows * (double)x->cols * x->copies *
				 mdl_tensor_share(a, x) * p / t;
	}
	/* the GEMMs write them and dora_output_traffic counts their reads: no passes of their
	 * own */
	out[n++] = (struct mdl_act_item){"dora.base_output", 0, b * outs, false, false};
	out[n++] = (struct mdl_act_item){"dora.lora_output", 0, p * outs, false, false};
	if (wcopy > 0) /* not the tokens' (gemm_input's kept whatever the tokens) */
		out[n++] = (struct mdl_act_item){"dora.weight_copy", 0, wcopy, false, false};
	return n;
}

/* Whether the gated MLP runs in Unsloth's LoRA_MLP (job.fused_lora): X, e = X G and g = X U kept,
 * the SwiGLU one Triton kernel (swiglu_fg_kernel) whose product h its backward kernel makes
 * again (swiglu_DWf_DW_dfg_kernel), so neither act(e) nor down's input h is kept
 * (unsloth/kernels/fast_lora.py at 0050c73, LoRA_MLP.forward: save_for_backward(gateA, gateB,
 * upA, upB, downA, downB, X, e, g)) [A: source]. */
static bool mlp_fused(const struct mdl_arch *a, const struct mdl_job *j)
{
	for (int i = 0; i < a->nlayer; i++)
		if ((a->layer[i].target & MDL_T_DOWN) && mdl_job_lora_fused(a, j, &a->layer[i]))
			return a->gated_mlp;
	return false;
}

int mdl_act_layer_items(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp,
			struct mdl_act_item *out)
{
	double e = mdl_job_act_bytes(j);
	/* the residual stream's and the norms', quantised linears' and MLP's outputs' bytes: e,
	 * or fp32 under a QLoRA base's upcast norms (mdl_upcast); what the matmuls and the
	 * attention kernel keep is the compute dtype's copy autocast hands them */
	double st = mdl_job_stream_bytes(a, j);
	double t = tp ? (double)tp : 1.0;
	double rep = sp ? t : 1.0; /* replicated under TP unless sequence parallel */
	double sb = (double)j->seq * (double)j->micro_batch;
	double sbh = sb * (double)a->hidden;
	double q = sb * (double)(a->heads * a->head_dim), kv = sb * (double)(a->kv_heads * a->head_dim);
	double v = sb * (double)(a->kv_heads * a->v_head_dim), o = sb * (double)(a->heads * a->v_head_dim);
	double s2 = (double)j->micro_batch * (double)a->heads * (double)j->seq * (double)j->seq;
	double I = sb * mdl_arch_mlp_width(a); /* experts a token passes included */
	double k = a->experts ? (double)a->experts_per_tok : 1.0;
	double moe = a->experts ? (double)a->moe_layers / (double)a->layers : 0.0;
	int n = 0;

	/* torch.compile's min-cut partitioner (torch/_functorch/partitioners.py,
	 * min_cut_rematerialization_partition, the default for compiled training graphs; Horace He,
	 * "Min-cut optimal recomputation", dev-discuss.pytorch.org 2022) recomputes in backward
	 * only what fusible ops alone read there: its ban_recompute_materialized_backward (on by
	 * default, torch/_functorch/config.py) keeps every tensor a non-fusible backward op reads,
	 * and a matmul's weight gradient and the attention kernel's backward are such ops. So a
	 * compiled layer keeps the norms' outputs (the projections' inputs) and the MLP's product
	 * (down_proj's input) as eager does; it saves the norm's input and its fp32 reciprocal RMS
	 * (a reduction's small output, ban_recompute_reductions) and recomputes the normalised
	 * value, and recomputes the activation act(gate) from gate, read by the product's
	 * backward alone. What it drops is an eager norm's temporaries (the ".eager" items below,
	 * job.eager_ops; fused norms keep none) and act(gate). Its output is neither saved nor
	 * written out, which also removes its traffic from the memory-bound kernels. Measured
	 * (published.md B.2, torchtune 3B, no recompute): compile took 9.0 GiB off the eager peak
	 * of 60.0, which this inventory puts at 59.8 GiB with the eager temporaries; recomputing
	 * the projections' inputs too would take 6.1 GiB more. */
	bool fused = j->compile;
	/* eager RMSNorms (Hugging Face's LlamaRMSNorm, torchtune's RMSNorm) keep for backward
	 * pow's input, the fp32 copy of x, in place of x itself (to(fp32) saves nothing and x
	 * dies with the layer's locals), and the weight product's input, the normalised value
	 * cast back: 4 B an element beside the e a fused norm keeps (its input); in fp32 nothing
	 * is cast and x is pow's input, so the normalised value alone, e. LayerNorm is one ATen
	 * kernel either way. */
	double rms = j->eager_ops && !a->norm_bias ? (st < 4.0 ? 4.0 : st) : 0.0;
	/* Under LoRA the norms' weights are frozen, so the weight product keeps nothing of the
	 * normalised value (mul keeps each factor for the other's gradient alone, as mm does:
	 * inputs_kept): an eager norm keeps its fp32 input alone, the ".eager" item */
	bool frozen_norm = rms > 0 && j->method != MDL_FULL;
	norm_input(out, &n, "input_norm.input", st * sbh / rep, frozen_norm);
	if (fused)
		item(out, &n, "input_norm.rstd", 4.0 * sb / rep, false);
	if (rms > 0)
		item(out, &n, "input_norm.eager", rms * sbh / rep, false);
	/* a parallel block with one norm feeds its MLP the same normed input (Phi) */
	bool one_input = a->parallel && a->norms_per_layer == 1;
	unsigned qkv_readers = MDL_T_Q | MDL_T_K | MDL_T_V;
	if (one_input)
		qkv_readers |= MDL_T_GATE | MDL_T_UP;
	gemm_input(out, &n, "qkv_proj.input", j, e, sbh / rep, inputs_kept(a, j, qkv_readers));
	mark_held(a, j, &out[n - 1], qkv_readers);
	if (a->kv_lora_rank) {
		/* MLA's down-projections are replicated under TP (Megatron's linear_q_down_proj,
		 * linear_kv_down_proj): the compressed query and key-value, each kept as its norm's
		 * input and output for the up-projection, and the shared rotary key */
		item(out, &n, "q_a.output", 2.0 * e * sb * (double)a->q_lora_rank / rep, false);
		item(out, &n, "kv_a.output",
		     e * sb * (2.0 * (double)a->kv_lora_rank + (double)a->qk_rope_dim) / rep, false);
	}
	if (a->qk_norm) { /* q_norm and k_norm keep their inputs, the projections' outputs */
		norm_input(out, &n, "q_norm.input", st * q / t, frozen_norm);
		norm_input(out, &n, "k_norm.input", st * kv / t, frozen_norm);
		if (rms > 0)
			item(out, &n, "qk_norm.eager", rms * (q + kv) / t, false);
	}
	item(out, &n, "q", e * q / t, false);
	item(out, &n, "k", e * kv / t, false);
	item(out, &n, "v", e * v / t, false);
	if (mdl_act_kv_repeated(a, j)) {
		/* repeat_kv's copies: the keys and values at every query head's width, which the
		 * attention keeps in place of the key-value heads' (nothing else keeps those);
		 * the copy writes them once and the kernel reads them, the bytes they move */
		double rep_k = sb * (double)((a->heads - a->kv_heads) * a->head_dim);
		double rep_v = sb * (double)((a->heads - a->kv_heads) * a->v_head_dim);
		item(out, &n, "k.repeated", e * rep_k / t, true);
		item(out, &n, "v.repeated", e * rep_v / t, true);
	}
	if (mdl_act_fused_qkv_kept(a, j))
		/* v a view of one fused projection's output keeps its q and k parts too, beside
		 * the rotated copies the attention keeps (mdl_job.fused_qkv): no bytes move for
		 * it, the attention's own saved tensors go with them under selective recompute */
		out[n++] = (struct mdl_act_item){"qkv.fused_output", 0, e * (q + kv) / t, true,
						 false};
	if (j->attention == MDL_ATTN_EAGER) {
		/* the softmax's output, which its backward reads: Megatron's fused softmax
		 * writes it in the compute dtype and the bmm by the values reads that tensor;
		 * as PyTorch ops (transformers' eager attention: softmax(w, dim=-1,
		 * dtype=torch.float32).to(query.dtype); GPT-2's softmax, which autocast runs in
		 * fp32) softmax keeps its fp32 result (SoftmaxBackward saves it) and the bmm the
		 * compute-dtype copy it is handed, or dropout's output in its place [A: source] */
		item(out, &n, "attn.softmax", (j->eager_ops ? 4.0 : e) * s2 / t, true);
		/* Gemma 2's cap before the softmax: scores / cap, tanh, * cap, tanh keeping its
		 * output for backward (its eager attention; FlashAttention-2 caps in its kernel) */
		if (a->attn_softcap)
			item(out, &n, "attn.softcap", e * s2 / t, true);
		if (j->eager_ops) {
			item(out, &n, "attn.probs", e * s2 / t, true);
			if (a->attn_dropout > 0)
				out[n - 1].kept = 0;
		}
		if (a->attn_dropout > 0) {
			item(out, &n, "attn.dropout_mask", s2 / t, true); /* 1 byte per element */
			item(out, &n, "attn.dropout_out", e * s2 / t, true);
		}
	} else {
		/* FlashAttention-2 keeps the fp32 log-sum-exp per query row (Dao 2023, Alg. 1) */
		item(out, &n, "attn.logsumexp", 4.0 * sb * (double)a->heads / t, true);
	}
	/* the fused attention kernels keep their output, o_proj's input (its heads side by side
	 * are a view of it); eager attention's last bmm keeps its operands, not its product */
	gemm_input(out, &n, "o_proj.input", j, e, o / t,
		   j->attention != MDL_ATTN_EAGER || inputs_kept(a, j, MDL_T_O));
	mark_held(a, j, &out[n - 1], MDL_T_O);
	if (a->resid_dropout > 0)
		item(out, &n, "attn.resid_dropout_mask", sbh / rep, false);
	if (a->norms_per_layer == 4) {
		norm_input(out, &n, "post_attention_norm.input", st * sbh / rep, frozen_norm);
		if (rms > 0)
			item(out, &n, "post_attention_norm.eager", rms * sbh / rep, false);
	}
	dequantised(out, &n, "attn.dequantised_weights", a, j, tp, true);
	int first_mlp = n; /* the attention half comes first, the MLP half from its norm on */
	/* a parallel block normalises the layer's input for the MLP too, already kept (Falcon's
	 * ln_mlp), or feeds it the attention's normed input, kept as well (one norm: Phi) */
	if (!a->parallel)
		norm_input(out, &n, "mlp_norm.input", st * sbh / rep, frozen_norm);
	if (a->norms_per_layer != 1) {
		if (fused)
			item(out, &n, "mlp_norm.rstd", 4.0 * sb / rep, false);
		if (rms > 0)
			item(out, &n, "mlp_norm.eager", rms * sbh / rep, false);
		gemm_input(out, &n, "mlp.input", j, e, sbh / rep,
			   a->experts || inputs_kept(a, j, MDL_T_GATE | MDL_T_UP));
		mark_held(a, j, &out[n - 1], MDL_T_GATE | MDL_T_UP);
	}
	if (a->experts) {
		/* router logits kept in fp32 for the softmax; each token's hidden state gathered
		 * into and weighted out of k experts (HF MixtralSparseMoeBlock), in the layers that
		 * have experts */
		item(out, &n, "router.logits", 4.0 * sb * a->experts * moe / rep, false);
		/* split over the TP ranks (expert_gather), the experts' input is what a rank
		 * gathered from them: Megatron-Core's alltoall dispatcher all-gathers the routed
		 * tokens across the expert TP group before the experts' column-parallel FC1 (its
		 * gather_from_sequence_parallel_region) [A: source] */
		double g = j->expert_gather > 1 && j->expert_gather <= t ? j->expert_gather : 1.0;
		gemm_input(out, &n, "experts.gathered_input", j, e, k * sbh * moe * g / t, true);
		mark_held(a, j, &out[n - 1], MDL_T_GATE | MDL_T_UP);
		item(out, &n, "experts.weighted_output", st * k * sbh * moe / t, false);
	}
	bool unsloth_mlp = mlp_fused(a, j);
	bool down_kept = a->experts || (inputs_kept(a, j, MDL_T_DOWN) && !unsloth_mlp);
	if (a->gated_mlp) {
		/* act(gate(x)) * up(x): the activation's input, its output, up(x), the product
		 * (the product's factors are what its mul keeps, not the product) */
		item(out, &n, "mlp.gate_out", st * I / t, false);
		if (!fused && !j->fused_glu && !unsloth_mlp)
			item(out, &n, "mlp.act_out", st * I / t, false);
		item(out, &n, "mlp.up_out", st * I / t, false);
		gemm_input(out, &n, "down_proj.input", j, e, I / t, down_kept);
		mark_held(a, j, &out[n - 1], MDL_T_DOWN);
	} else {
		/* GELU keeps its input, the second linear its output; ReLU's backward reads its
		 * output (threshold_backward(grad, result), PyTorch derivatives.yaml), the very
		 * tensor the second linear keeps: one tensor, kept by ReLU whatever the linear */
		if (!a->relu_mlp)
			item(out, &n, "mlp.fc_out", st * I / t, false);
		gemm_input(out, &n, "down_proj.input", j, e, I / t, down_kept || a->relu_mlp);
		mark_held(a, j, &out[n - 1], MDL_T_DOWN);
	}
	if (a->resid_dropout > 0)
		item(out, &n, "mlp.resid_dropout_mask", sbh / rep, false);
	if (a->norms_per_layer == 4) {
		norm_input(out, &n, "post_feedforward_norm.input", st * sbh / rep, frozen_norm);
		if (rms > 0)
			item(out, &n, "post_feedforward_norm.eager", rms * sbh / rep, false);
	}
	dequantised(out, &n, "mlp.dequantised_weights", a, j, tp, false);
	for (int i = first_mlp; i < n; i++)
		out[i].mlp = true;
	if (j->method != MDL_FULL) {
		/* what lora_A keeps of its input, in bytes an element: the adapters' dtype, or
		 * under autocast (mdl_job_mixed) the compute-dtype copy its GEMM takes (fp32
		 * adapters, job.lora_fp32) */
		double keep = mdl_job_lora_out_bytes(j);
		/* each adapter keeps x A (s b r) as the input of B (counted with the attention
		 * half: the adapters span both) */
		double r = 0; /* Unsloth's fused LoRA makes it again in backward */
		for (int i = 0; i < a->nlayer; i++)
			if ((a->layer[i].target & j->lora_targets) &&
			    !mdl_job_lora_fused(a, j, &a->layer[i]))
				r += keep * sb * (double)j->lora_rank * a->layer[i].active *
				     mdl_tensor_share(a, &a->layer[i]);
		item(out, &n, "lora.intermediate", r, false);
		/* with lora_dropout > 0, PEFT runs lora_A on dropout(x): a new tensor of the
		 * adapter's input, kept for lora_A's weight gradient, and the dropout's 1-byte mask
		 * (peft/tuners/lora/layer.py: nn.Dropout when lora_dropout > 0, else nn.Identity);
		 * without dropout an adapter that casts its input keeps the cast copy, its own; a
		 * fused q/k/v projection's one adapter keeps one of either (shared_qkv_input).
		 * Inputs of the row-parallel o_proj and down_proj are split by TP, the others are
		 * replicated unless sequence parallel. */
		bool drop = j->lora_dropout > 0;
		double d = 0;
		bool qkv_seen = false;
		for (int i = 0; (drop || adapter_casts(a, j)) && i < a->nlayer; i++) {
			const struct mdl_tensor *x = &a->layer[i];
			if ((x->target & j->lora_targets) && !mdl_job_lora_fused(a, j, x) &&
			    !shared_qkv_input(j, x, &qkv_seen))
				d += (keep + (drop ? 1.0 : 0.0)) * sb * (double)x->rows * x->active *
				     mdl_tensor_share(a, x) / (row_parallel(x) ? t : rep);
		}
		if (d > 0)
			item(out, &n, drop ? "lora.dropout" : "lora.input", d, false);
		if (j->dora)
			n = dora_items(a, j, t, rep, out, n);
	}
	return n;
}

/*
 * DoRA's output path instead of LoRA's (job.dora), per element of an adapted linear's output,
 * counted from PEFT's DoraLinearLayer.forward (peft/tuners/lora/dora.py at 5d602fd) and the
 * layer's sum (tuners/lora/layer.py), each op reading its operands and writing its result once,
 * with s the stream's dtype, a the adapters', p what lora_B writes, b the base product's
 * (dora_base_bytes) and the magnitude a vector of a [A: source; D: counted]:
 *   forward: lora_B's output (p); (m - 1) x base (b + q1, q1 the wider of a and b); m x lora
 *   (p + q2, q2 the wider of a and p); the scaling (2 q2); their sum (q1 + q2 + q3, q3 the
 *   wider); the layer's result + that (s + q3 + q) and its cast back (q + s where q != s)
 *   backward: the cast's gradient (2 (q + s) where q != s); the scaling's (2 q2); the adapters'
 *   output gradient m x g (2 q2, cast to p where p != q2) and the magnitude's sum of g x lora
 *   over the tokens (q2 + p + q2, then q2); the base's, (m - 1) x g (2 q1, cast to b where
 *   b != q1), and the sum of g x base (q1 + b + q1, then q1); the base output's two gradients
 *   summed where it is the base layer's own (3 b; under lora_dropout the product again takes
 *   its own); lora_B reading its output gradient (p).
 * torchtune's DoRALinear adds the base output inside the module: the same ops.
 */
static void dora_output_traffic(const struct mdl_arch *a, const struct mdl_job *j, double *fwd,
				double *bwd)
{
	double s = mdl_job_stream_bytes(a, j), ad = mdl_job_adapter_bytes(j);
	double p = mdl_job_lora_out_bytes(j), b = dora_base_bytes(a, j);
	double q1 = fmax(ad, b), q2 = fmax(ad, p), q3 = fmax(q1, q2), q = fmax(s, q3);
	*fwd = p + (b + q1) + (p + q2) + 2.0 * q2 + (q1 + q2 + q3) + (s + q3 + q) +
	       (q != s ? q + s : 0);
	*bwd = (q != s ? 2.0 * (q + s) : 0) + 2.0 * q2 + 2.0 * q2 + (p != q2 ? q2 + p : 0) +
	       3.0 * q2 + p + 2.0 * q1 + (q1 != b ? q1 + b : 0) + 3.0 * q1 + b +
	       (j->lora_dropout > 0 ? 0 : 3.0 * b) + p;
}

/*
 * LoRA's adapter path beyond the inventory, per element of an adapted projection's input (in)
 * and output (out): PEFT's Linear.forward runs x.to(lora_A.weight.dtype), then result +
 * lora_B(lora_A(dropout(x))) * scaling and result.to(the base's dtype) (peft/tuners/lora/
 * layer.py, v0.13) [A: PEFT source]; torchtune's LoRALinear, LitGPT's and NeMo's adapters add
 * the scaled product alike. With x's dtype s (the stream), the adapters' a, p the dtype lora_B
 * writes (the compute dtype e under autocast, else a) and q the sum's (the wider of s and p),
 * each op read and written once [D: counted from the ops]:
 *   forward, in:  the cast (s + a, where a != s); dropout reads its input (a), and where
 *                 autocast casts lora_A's input (a != e) dropout's output is written (a) and
 *                 read by that cast (a), or the cast reads the undropped copy (a); without
 *                 dropout or a cast lora_A reads x a second time (s)
 *   forward, out: lora_B's output (p), the scaling (2 p), the sum (s + p + q), the cast back
 *                 (q + s, where q != s)
 *   backward, out: the cast back's and the sum's gradients cast (2 (q + s), where q != s), the
 *                 branch's cast (q + p, where p != q), the scaling's (2 p), lora_B's input
 *                 gradient reading the output gradient (p)
 *   backward, in: the casts' (a + s, and e + a where autocast casts, with dropout's 2 a),
 *                 and the input gradient summed with the base's (3 s)
 * What the kept tensors move (the dropout's output and mask, x A) the inventory counts. Under
 * torch.compile the scaling, sum and casts fuse into the GEMMs' neighbours: none; DoRA's
 * output path (dora_output_traffic) is then one kernel each way, reading the base and the
 * adapters' outputs and writing the sum forward (b + p + s), reading the gradient with both
 * and writing theirs backward (s + 2 b + 2 p) [D: Inductor's pointwise fusion].
 */
static double adapter_traffic(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			      bool sp, double *bwd, double *tensor)
{
	*bwd = *tensor = 0;
	if (j->method == MDL_FULL || (j->compile && !j->dora))
		return 0;
	double s = mdl_job_stream_bytes(a, j), ad = mdl_job_adapter_bytes(j);
	double e = mdl_job_act_bytes(j);
	bool mixed = mdl_job_mixed(j), cast = adapter_casts(a, j), drop = j->lora_dropout > 0;
	bool acast = mixed && ad != e; /* autocast hands lora_A a compute-dtype copy */
	double p = mdl_job_lora_out_bytes(j), q = fmax(s, p);
	double in_f = (cast ? s + ad : 0) + (drop ? ad : 0) +
		      (acast ? (drop ? 2.0 * ad : ad) : 0) + (!drop && !cast ? s : 0);
	double out_f = p + 2.0 * p + (s + p + q) + (q != s ? q + s : 0);
	double out_b = (q != s ? 2.0 * (q + s) : 0) + (p != q ? q + p : 0) + 2.0 * p + p;
	double in_b = (cast ? ad + s : 0) + (acast ? e + ad + (drop ? 2.0 * ad : 0) : 0) + 3.0 * s;
	if (j->compile) /* DoRA's one fused kernel each way (below) */
		in_f = out_f = in_b = out_b = 0;
	else if (j->dora) /* its output path instead of LoRA's */
		dora_output_traffic(a, j, &out_f, &out_b);
	double t = tp ? (double)tp : 1.0, rep = sp ? t : 1.0, sb = (double)j->seq * j->micro_batch;
	double f = 0;
	bool qkv_seen = false;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *x = &a->layer[i];
		if (!(x->target & j->lora_targets))
			continue;
		double n = sb * x->active * mdl_tensor_share(a, x);
		double in = (double)x->rows / (row_parallel(x) ? t : rep);
		if (shared_qkv_input(j, x, &qkv_seen))
			in = 0; /* the fused projection's one adapter read its input already */
		double out = (double)x->cols / (row_parallel(x) ? rep : t);
		/* the widest tensor its path passes on: the input or the output, in the widest
		 * dtype the path writes */
		double rows = (double)x->rows / (row_parallel(x) ? t : rep);
		*tensor = fmax(*tensor, n * fmax(rows, out) * fmax(q, ad));
		if (mdl_job_lora_fused(a, j, x)) {
			/* Unsloth's matmul_lora: X A reads X, the addmm_ of (X A) B reads and
			 * writes the output; backward, the input gradient's addmm_ reads and writes
			 * dX and X A is made again from X, the output gradient read for d B and
			 * for dY B^T (unsloth/kernels/fast_lora.py, utils.py) [A; D: counted] */
			f += n * (s * in + 2.0 * s * out);
			*bwd += n * (3.0 * s * in + 2.0 * s * out);
			continue;
		}
		f += n * (in_f * in + out_f * out);
		*bwd += n * (in_b * in + out_b * out);
		if (j->compile && j->dora) { /* the magnitude's products and sum fused */
			double b = dora_base_bytes(a, j);
			f += n * out * (b + p + s);
			*bwd += n * out * (s + 2.0 * b + 2.0 * p);
		}
	}
	return f;
}

/*
 * What eager norm and rotary kernels take beyond one fused kernel's passes, measured: the
 * median times of Hugging Face's LlamaRMSNorm and apply_rotary_pos_emb against Liger-Kernel's
 * fused Triton kernels on an A100-SXM4-80GB in bf16 (linkedin/Liger-Kernel
 * benchmark/data/all_benchmark_data.csv, liger 0.2.1, triton.testing.do_bench), their
 * difference turned into bytes at the rate memory-bound kernels get (0.88 x 2,039 GB/s), over
 * what the ops below count beyond a fused kernel: RMSNorm over 2,048 rows of 8,192 to 32,768,
 * forward 1.93-2.08x, backward 2.20-2.61x; the rotary embedding over 21-168 M query and key
 * elements (2,048 to 16,384 tokens), forward 2.28-2.45x, backward 3.52-3.79x (its smaller,
 * launch-bound sizes more) [B: measured, one GPU; the counts take each kernel as one pass at
 * the full rate, where the eager chain's reductions, broadcasts and strided views reach less].
 * Other GPUs: the same multiples of their own rate [C]; eager rotaries other than Hugging
 * Face's (fms's and torchtune's fp32 pairs) at Hugging Face's [C].
 */
#define EAGER_NORM_FWD 2.0
#define EAGER_NORM_BWD 2.5
#define EAGER_ROPE_FWD 2.4
#define EAGER_ROPE_BWD 3.7

/*
 * Eager norms and rotary embeddings: what their kernels move beyond the inventory's write and
 * read of each kept tensor, per element, with e the compute dtype's bytes and f = 4 (fp32) [D:
 * counted from the ops, each reading its inputs and writing its output once], then taken at
 * the measured multiples above:
 *   RMSNorm forward: to(fp32) e+f, pow 2f, mean f, mul by rsqrt 2f, to(dtype) f+e, weight
 *   product 2e = 4e+7f; the inventory counts the input's read and output's write (2e) and its
 *   eager item (f more kept) written and read (2f): 2e+5f more. Without casts (fp32) 7f, less
 *   the input, output and normalised value's item 4f: 3f.
 *   Backward: the weight product's two gradients 4e, the cast's e+f, the rsqrt product's 4f,
 *   mean's expand f, pow's 3f, the two gradients' sum 3f, the cast's f+e = 6e+13f, less the
 *   inventory's four passes over the eager item (4f): 6e+9f more (fp32: 15f-4f = 11f).
 *   Rotary (q*cos + rotate_half(q)*sin: mul 2e, neg of half e, cat 2e, mul 2e, add 3e = 10e),
 *   against one fused kernel's read and write: 8e more forward; backward two products' 4e,
 *   the neg's e, the sum 3e = 8e, against 2e: 6e more. Applied to every query and key element
 *   (MLA: the shared rotary key and each head's rotary part).
 * A fused kernel's passes are the inventory's already. The final norm, one of the model's,
 * is left out.
 */
static void eager_ops(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp,
		      struct mdl_eager *nm, struct mdl_eager *rp)
{
	/* the norms and the rotary embedding work on the residual stream and the projections'
	 * outputs: fp32 under a QLoRA base's upcast norms (mdl_job_stream_bytes) */
	double e = mdl_job_stream_bytes(a, j), f = 4.0, t = tp ? (double)tp : 1.0;
	double rep = sp ? t : 1.0, sb = (double)j->seq * (double)j->micro_batch;
	double qk = a->kv_lora_rank ? (double)(a->heads + 1) * (double)a->qk_rope_dim
				    : (double)(a->heads + a->kv_heads) * (double)a->head_dim;
	double norm = 0, rope = mdl_arch_rotary(a) ? sb * qk / t : 0;
	if (!a->norm_bias)
		norm = sb * ((double)a->norms_per_layer * (double)a->hidden / rep +
			     (a->qk_norm ? (double)(a->heads + a->kv_heads) * a->head_dim / t : 0));
	bool cast = e < f;
	nm->fwd = norm * (cast ? 2 * e + 5 * f : 3 * f) * EAGER_NORM_FWD;
	nm->bwd = norm * (cast ? 6 * e + 9 * f : 11 * f) * EAGER_NORM_BWD;
	rp->fwd = rope * 8 * e * EAGER_ROPE_FWD;
	rp->bwd = rope * 6 * e * EAGER_ROPE_BWD;
	/* the norm's fp32 copy of the residual stream; the rotary's query heads (the keys' are
	 * as many or fewer) */
	nm->tensor = norm > 0 ? sb * (double)a->hidden / rep * f : 0;
	double head = a->kv_lora_rank ? (double)a->qk_rope_dim : (double)a->head_dim;
	rp->tensor = rope > 0 ? sb * (double)a->heads * head / t * e : 0;
}

double mdl_act_layer_eager(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			   bool sp, double *bwd, struct mdl_eager *chains)
{
	struct mdl_eager c[MDL_EAGER_CHAINS] = {{0}};
	struct mdl_eager *ad = &c[MDL_EAGER_ADAPTER];
	ad->fwd = adapter_traffic(a, j, tp, sp, &ad->bwd, &ad->tensor);
	if (j->eager_ops)
		eager_ops(a, j, tp, sp, &c[MDL_EAGER_NORM], &c[MDL_EAGER_ROPE]);
	double f = 0;
	*bwd = 0;
	for (int i = 0; i < MDL_EAGER_CHAINS; i++) {
		f += c[i].fwd;
		*bwd += c[i].bwd;
		if (chains)
			chains[i] = c[i];
	}
	return f;
}

double mdl_act_layer_working(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			     bool sp)
{
	struct mdl_act_item it[MDL_ACT_MAX_ITEMS];
	int n = mdl_act_layer_items(a, j, tp, sp, it);
	double b = 0;

	for (int i = 0; i < n; i++)
		b += it[i].kept;
	return b;
}

/*
 * A layer's backward makes the gradients of its activations as it goes, each beside the saved
 * tensors the op still holds; the most at once come in the MLP. The gated product act(gate) * up
 * takes the gradient of its output (the down projection's input gradient) and makes one for each
 * factor while that one is alive (PyTorch tools/autograd/derivatives.yaml, mul: grad * other and
 * grad * self; a fused SwiGLU's backward, Megatron-Core's bias_swiglu or Liger-Kernel's
 * LigerSiLUMulFunction, reads the one and writes the two as well) [A: source]: three of the
 * MLP's width a token, in the activations' dtype; without a gate the second linear's input
 * gradient and the activation's input gradient, two. Experts looped one at a time (Hugging
 * Face's MoE blocks, --moe-gemm loop) hold one expert's tokens' at once, grouped ones all the
 * routed tokens'. The attention's (dq, dk, dv beside the output's) are the smaller. Measured:
 * IBM fms-acceleration's Llama-3-8B LoRA and QLoRA runs with Liger-Kernel's chunked loss on one
 * A100 (scripts/benchmarks/refs/a100_80gb_liger.csv at 733992a, full recompute, 4 to 32
 * sequences of 4,096 tokens), whose peaks come in the last layer's backward, grow 2.02 and
 * 1.99 GiB a sequence (LoRA, QLoRA) where the saved tensors alone make 1.66; with these three
 * of 14,336 bf16 a token, 1.99 [B: measured].
 */
double mdl_act_layer_grads(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp)
{
	double w = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *x = &a->layer[i];
		if (!x->matmul || !(x->target & MDL_T_UP))
			continue;
		double cols = (double)x->cols * x->active * mdl_tensor_share(a, x);
		w += x->copies > 1 && !j->grouped_experts ? cols / (double)x->copies : cols;
	}
	double sb = (double)j->seq * (double)j->micro_batch;
	return (a->gated_mlp ? 3.0 : 2.0) * mdl_job_stream_bytes(a, j) * sb * w /
	       (tp ? (double)tp : 1.0);
}

double mdl_act_half_working(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			    bool sp)
{
	struct mdl_act_item it[MDL_ACT_MAX_ITEMS];
	int n = mdl_act_layer_items(a, j, tp, sp, it);
	double half[2] = {0, 0};

	for (int i = 0; i < n; i++)
		half[it[i].mlp] += it[i].kept;
	/* the other half's input, a residual-stream tensor, stays checkpointed meanwhile */
	double sbh = (double)j->seq * (double)j->micro_batch * (double)a->hidden;
	return fmax(half[0], half[1]) + mdl_job_stream_bytes(a, j) * sbh / (sp ? (double)tp : 1.0);
}

/* A matmul the op-level policy counts: a dense weight (experts' grouped matmuls are not
 * aten.mm) */
static bool op_sac_mm(const struct mdl_tensor *t)
{
	return t->matmul && t->copies <= 1;
}

bool mdl_op_sac_reruns(const struct mdl_tensor *t, int *k)
{
	return !op_sac_mm(t) || (*k)++ % 2 == 1;
}

double mdl_op_sac_recomputed(const struct mdl_arch *a)
{
	double p = 0;
	int k = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (t->matmul && mdl_op_sac_reruns(t, &k))
			p += (double)t->rows * (double)t->cols * t->active * mdl_tensor_share(a, t);
	}
	return p;
}

/* Bytes the op-level policy keeps of one layer: its input, the odd matmuls' outputs (split by
 * TP unless the matmul is row-parallel, o_proj and down_proj, whose outputs are whole), the
 * attention kernel's output and its log-sum-exp (eager attention: its softmax). */
static double op_sac_saved(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			   bool sp)
{
	double e = mdl_job_act_bytes(j), t = tp ? (double)tp : 1.0, rep = sp ? t : 1.0;
	double sb = (double)j->seq * (double)j->micro_batch;
	double b = mdl_job_stream_bytes(a, j) * sb * (double)a->hidden / rep; /* the input */
	int k = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *x = &a->layer[i];
		if (!op_sac_mm(x) || k++ % 2 == 1)
			continue;
		b += e * sb * (double)x->cols * x->active * mdl_tensor_share(a, x) /
		     (row_parallel(x) ? rep : t);
	}
	b += e * sb * (double)(a->heads * a->v_head_dim) / t; /* the attention kernel's output */
	if (mdl_attn_fused(j->attention))
		b += 4.0 * sb * (double)a->heads / t;
	else
		b += e * (double)j->micro_batch * (double)a->heads * (double)j->seq * (double)j->seq / t;
	return b;
}

/* The widths of a mean layer's MLP the tokens pass (mdl_arch_mlp_width's sum), the dense
 * layers' and the routed experts' (the shared experts the rest). */
static void mlp_widths(const struct mdl_arch *a, double *dense, double *routed)
{
	*dense = *routed = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (!t->matmul || !(t->target & MDL_T_UP))
			continue;
		double w = (double)t->cols * t->active * mdl_tensor_share(a, t);
		if (t->copies > 1)
			*routed += w;
		else if (strncmp(t->name, "shared_experts.", 15))
			*dense += w;
	}
}

/*
 * The share of item `it` that --recompute selective drops by its modules m beside the attention
 * core (mdl_job_rc_modules; the core's own items: rc_dropped): layernorm the outputs of the
 * norms Megatron-Core runs as modules of their own, the pre-MLP norm's in the MoE layers
 * (mlp.input, which the router and the dispatcher read) and MLA's input norm's
 * (qkv_proj.input); moe_act the routed experts' activation output (their share of
 * down_proj.input, which FC2 keeps); mla_up_proj MLA's up-projected and rotated keys and
 * values, and queries where they come from a latent (made again from the kept latents: job.c,
 * rc_module_params); mlp the dense layers' MLP from its fused norm's output on (its checkpoint
 * keeps its input, the residual stream mlp_norm.input holds). The rest of the layer keeps what
 * it kept.
 */
static double modules_dropped(const struct mdl_arch *a, unsigned m,
			      const struct mdl_act_item *it)
{
	double moe = a->experts ? (double)a->moe_layers / (double)a->layers : 0, d = 0;
	const char *n = it->name;
	bool norm_out = !strcmp(n, "mlp.input");
	if ((m & MDL_RM_LAYERNORM) && norm_out)
		d += moe;
	if ((m & MDL_RM_LAYERNORM) && a->kv_lora_rank && !strcmp(n, "qkv_proj.input"))
		d += 1;
	if ((m & MDL_RM_MLA_UP) && a->kv_lora_rank &&
	    ((a->q_lora_rank && !strcmp(n, "q")) || !strcmp(n, "k") || !strcmp(n, "v")))
		d += 1;
	if ((m & MDL_RM_MLP) && norm_out)
		d += 1 - moe;
	bool down = !strcmp(n, "down_proj.input");
	bool inner = down || !strcmp(n, "mlp.gate_out") || !strcmp(n, "mlp.act_out") ||
		     !strcmp(n, "mlp.up_out") || !strcmp(n, "mlp.fc_out");
	if (((m & MDL_RM_MOE_ACT) && down) || ((m & MDL_RM_MLP) && inner)) {
		double dense, routed, all = mdl_arch_mlp_width(a);
		mlp_widths(a, &dense, &routed);
		if ((m & MDL_RM_MOE_ACT) && down && all > 0)
			d += routed / all;
		if ((m & MDL_RM_MLP) && inner && all > 0)
			d += dense / all;
	}
	return fmin(d, 1);
}

/* rc_dropped's share for modules m (mdl_job_rc_modules): the attention core's items at once,
 * the rest only where m names more than the core (a search asks for every item of every
 * candidate's layer) */
static inline double rc_dropped(const struct mdl_arch *a, unsigned m, const struct mdl_act_item *it)
{
	if (it->attn_core || !(m & ~MDL_RM_CORE_ATTN))
		return it->attn_core && (m & MDL_RM_CORE_ATTN) ? 1 : 0;
	return modules_dropped(a, m, it);
}

/* What one layer keeps under the job's recompute mode: as backward holds it (moved false), or
 * as its kernels move it (moved true: an FP8 input at the compute dtype's bytes). */
static double layer_saved(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp,
			  bool moved)
{
	struct mdl_act_item it[MDL_ACT_MAX_ITEMS];
	int n;
	double b = 0;

	if (j->recompute == MDL_RC_OP)
		return op_sac_saved(a, j, tp, sp);
	if (j->recompute == MDL_RC_FULL) {
		/* only the layer input is checkpointed (Korthikanti: 2 s b h per layer), and what
		 * escapes a non-reentrant checkpoint stays as without it (mdl_act_layer_held); the
		 * recompute makes it again all the same */
		double sbh = (double)j->seq * (double)j->micro_batch * (double)a->hidden;
		return mdl_job_stream_bytes(a, j) * sbh / (sp ? (double)tp : 1.0) +
		       (moved ? 0 : mdl_act_layer_held(a, j, tp, sp));
	}
	n = mdl_act_layer_items(a, j, tp, sp, it);
	unsigned m = mdl_job_rc_modules(j);
	for (int i = 0; i < n; i++)
		b += (moved ? it[i].bytes : it[i].kept) * (1 - rc_dropped(a, m, &it[i]));
	return b;
}

double mdl_act_layer_saved(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			   bool sp)
{
	return layer_saved(a, j, tp, sp, false);
}

double mdl_act_layer_held(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp)
{
	struct mdl_act_item it[MDL_ACT_MAX_ITEMS];
	double b = 0;
	if (!ctx_keeps_inputs(j) || j->recompute == MDL_RC_OP ||
	    (j->recompute == MDL_RC_FULL && !j->recompute_early_stop))
		return 0; /* (the inventory not listed for nothing: a search builds it per step) */
	int n = mdl_act_layer_items(a, j, tp, sp, it);
	unsigned m = mdl_job_rc_modules(j);
	for (int i = 0; i < n; i++)
		if (it[i].held)
			b += it[i].kept * (1 - rc_dropped(a, m, &it[i]));
	return b;
}

double mdl_act_head_held(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp)
{
	if (!j->quant_head || !ctx_keeps_inputs(j))
		return 0;
	double sbh = (double)j->seq * (double)j->micro_batch * (double)a->hidden;
	return mdl_job_act_bytes(j) * sbh / (sp && tp ? (double)tp : 1.0);
}

double mdl_act_layer_moved(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			   bool sp, double *saved)
{
	struct mdl_act_item it[MDL_ACT_MAX_ITEMS];
	int n = mdl_act_layer_items(a, j, tp, sp, it);
	double b = 0;

	for (int i = 0; i < n; i++)
		b += it[i].bytes;
	*saved = layer_saved(a, j, tp, sp, true);
	return b;
}

double mdl_act_embed(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp)
{
	double sbh = (double)j->seq * (double)j->micro_batch * (double)a->hidden;

	/* token ids are int64 (8 B) for the embedding backward; GPT-2 adds a dropout mask, BLOOM's
	 * embedding LayerNorm keeps its input */
	double rep = sp ? (double)tp : 1.0;
	return 8.0 * (double)j->seq * (double)j->micro_batch +
	       (a->embd_dropout > 0 ? sbh / rep : 0.0) +
	       (a->embed_norm ? mdl_job_stream_bytes(a, j) * sbh / rep : 0.0);
}

/* Bytes a logit of the model's compute-dtype logits adds to what the unchunked full and
 * fused-fp32 losses hold at their peak. Where the loss function casts them to fp32 (transformers
 * 4.46 and later, torchtitan) the model's output still holds them while the cast, the shifted
 * copy and the loss's own tensors exist, the forward's peak (counted with what the loss keeps
 * for backward: the same bytes, since the fp32 copy and the shifted one make as many as the
 * loss backward's gradients). Where the model casts them (job.upcast_in_model) they are a
 * temporary freed at the cast: none. An fp32 model's cast copies nothing: e either way. */
static double logits_held(const struct mdl_job *j, double e)
{
	return j->upcast_in_model && mdl_loss_upcasts(j->loss) && e < 4.0 ? 0.0 : e;
}

double mdl_act_head_logits(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp)
{
	if ((j->loss != MDL_LOSS_FULL && j->loss != MDL_LOSS_CHUNKED_OUTPUT) || j->compile)
		return 0;
	double sbv = (double)j->seq * (double)j->micro_batch * (double)a->vocab;
	return logits_held(j, mdl_job_act_bytes(j)) * sbv / (tp ? (double)tp : 1.0);
}

double mdl_act_head(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp)
{
	double e = mdl_job_act_bytes(j), st = mdl_job_stream_bytes(a, j);
	double t = tp ? (double)tp : 1.0;
	double sb = (double)j->seq * (double)j->micro_batch;
	double sbh = sb * (double)a->hidden, sbv = sb * (double)a->vocab;

	/* final norm input (in the stream's dtype: mdl_job_stream_bytes) and lm_head input;
	 * logits in compute precision; the loss upcasts to
	 * fp32 and log_softmax keeps its fp32 output (HF LlamaForCausalLM: logits.float()); the
	 * chunked-output loss keeps the same, each chunk's log-probabilities saved.
	 * The vocabulary dimension is split by Megatron's vocab-parallel lm_head.
	 * Chunked: Liger-Kernel's fused linear cross-entropy takes tokens in chunks of
	 * BT / ceil(V / H), so one chunk's logits hold about BT x H values, in the compute dtype and
	 * upcast to fp32, and the logits' gradient is formed in the forward: nothing of size
	 * b x s x V outlives a chunk (liger_kernel/ops/fused_linear_cross_entropy.py) [A]. */
	if (j->loss == MDL_LOSS_CHUNKED)
		return (st + e) * sbh / (sp ? t : 1.0) + (e + 4.0) * sbh / t;
	/* Baichuan 2's NormHead hands its matmul a normalised copy of the head's weight, which
	 * the matmul keeps for the input gradient whether the head trains or not (mm keeps mat2
	 * for mat1's gradient): vocab x hidden in the compute dtype a micro-batch, whatever the
	 * tokens. The chunked loss's kernel takes its gradients in the forward and keeps none. */
	/* what the head keeps beyond its inputs, the logits and the loss's tensors */
	double extra = a->norm_head ? e * (double)a->vocab * (double)a->hidden / t : 0;
	/* an fp32 head (--kbit-upcast all) meets a compute-dtype input under autocast, whose
	 * linear casts the weight and keeps that copy for the input gradient the same way */
	if (!a->norm_head && mdl_job_upcast(j) == MDL_UPCAST_ALL)
		extra = e * (double)a->vocab * (double)a->hidden / t;
	/* Gemma 2 caps the logits (Gemma2ForCausalLM: logits / cap, tanh, * cap; torchtune's
	 * Gemma 2 the same): tanh keeps its output, the logits' size, for backward; the chunked
	 * loss's kernel caps each chunk inside */
	if (a->final_softcap)
		extra += e * sbv / t;
	/* fused: flash-attn's cross-entropy kernel saves its input, the logits in the compute
	 * dtype, and each row's fp32 log-sum-exp (flash_attn/ops/triton/cross_entropy.py:
	 * ctx.save_for_backward(logits, lse, labels)) [A: source] */
	if (j->loss == MDL_LOSS_FUSED)
		return (st + e) * sbh / (sp ? t : 1.0) + e * sbv / t + 4.0 * sb + extra;
	/* fused-fp32: transformers' loss function casts the logits to fp32 and copies the
	 * shifted ones (logits.float(), logits[..., :-1, :].contiguous()), and Unsloth's kernel
	 * saves that copy and each row's fp32 log-sum-exp (fms-acceleration's
	 * FastForCausalLMLoss and Fast_CrossEntropyLoss: ctx.save_for_backward(logits,
	 * logsumexp, labels)) [A: source] */
	if (j->loss == MDL_LOSS_FUSED_FP32)
		return (st + e) * sbh / (sp ? t : 1.0) + (logits_held(j, e) + 4.0) * sbv / t +
		       4.0 * sb + extra;
	/* vocab-parallel: Megatron-Core's cross-entropy keeps the fp32 softmax of the logits it
	 * casts (an fp32 model's cast copies nothing), and the model's compute-dtype logits,
	 * which nothing saves, are alive beside it until the model's forward returns
	 * (megatron/core/tensor_parallel/cross_entropy.py and fusions/fused_cross_entropy.py:
	 * ctx.save_for_backward(exp_logits, ...); GPTModel.forward's logits) [A: source];
	 * Transformer Engine's kernel keeps the fp32 gradient it wrote in their place (TE 2.18:
	 * ctx.save_for_backward(grad_input)), or before 2.18 the logits themselves, the gradient
	 * written over them (ctx.save_for_backward(inp)) [A: source] */
	if (j->loss == MDL_LOSS_VOCAB_PARALLEL_TE_LEGACY) /* the gradient over the logits */
		return (st + e) * sbh / (sp ? t : 1.0) + e * sbv / t + extra;
	if (mdl_loss_vocab_parallel(j->loss))
		return (st + e) * sbh / (sp ? t : 1.0) + (e < 4.0 ? e + 4.0 : 4.0) * sbv / t +
		       extra;
	/* compiled, the cross-entropy's min-cut partition keeps the logits and each row's fp32
	 * log-sum-exp and recomputes the softmax in backward instead of saving the fp32
	 * log-probabilities (torchtune compiles its loss with the model; the partitioner as in
	 * mdl_act_layer_items). The logits it keeps are its input: unchunked, torchtune's model
	 * hands the loss fp32 logits (TransformerDecoder.unembed: self.output(h).float()), whose
	 * compute-dtype original nothing keeps; chunked, each chunk in the compute dtype. */
	if (j->compile)
		return (st + e) * sbh / (sp ? t : 1.0) +
		       (j->loss == MDL_LOSS_FULL ? 4.0 : e) * sbv / t + 4.0 * sb + extra;
	return (st + e) * sbh / (sp ? t : 1.0) + logits_held(j, e) * sbv / t + 4.0 * sbv / t +
	       extra;
}

/*
 * The unchunked loss's backward: nll_loss's backward materialises a dense fp32 gradient of the
 * log-probabilities, and log_softmax's backward a second one for its input, both of the
 * logits' shape, while the saved log-probabilities are still alive (PyTorch
 * tools/autograd/derivatives.yaml: _log_softmax_backward_data(grad, result, ...); the loss
 * runs in fp32 after transformers' ForCausalLMLoss logits.float(), as torchtitan's
 * cross_entropy_loss pred.float()). 8 bytes per logit element, split by a vocab-parallel head.
 * torchtune's CEWithChunkedOutputLoss does the same one of its chunks at a time
 * (MDL_OUTPUT_CHUNKS). flash-attn's fused kernel writes the gradient into a tensor like the
 * logits, in their dtype (dlogits = torch.empty_like(logits) unless inplace_backward, which
 * llm-foundry leaves off) [A: source]. A quantised head (job.quant_head) holds its dequantised
 * copies beside them while its first input-gradient GEMM runs, every saved tensor of the step
 * still alive (mdl_job_head_dequant_live; its forward's GEMMs ran with less alive: the
 * log-probabilities not yet made).
 */
double mdl_act_head_backward(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			     unsigned cp)
{
	double sbv = (double)j->seq * (double)j->micro_batch * (double)a->vocab;
	/* compiled, one fused kernel writes the gradient of the loss's input: the compute dtype's
	 * chunks, or the unchunked loss's fp32 logits, which the upcast's backward then casts
	 * (both alive at once) */
	double e = mdl_job_act_bytes(j);
	double b = (!j->compile ? 8.0 : j->loss == MDL_LOSS_FULL ? 4.0 + e : e) * sbv /
		   (tp ? (double)tp : 1.0);
	double dq = mdl_job_head_dequant_live(a, j, tp), v = b;

	switch (j->loss) {
	case MDL_LOSS_CHUNKED: /* no quantised head runs it (inputs.c) */
		return 0.0;
	case MDL_LOSS_CHUNKED_OUTPUT:
		v = b / MDL_OUTPUT_CHUNKS;
		break;
	case MDL_LOSS_FUSED:
		v = e * sbv / (tp ? (double)tp : 1.0);
		break;
	case MDL_LOSS_FUSED_FP32:
		/* the kernel writes the gradient over its saved fp32 copy; the shift's backward
		 * fills a zero fp32 gradient of the logits' shape beside it */
		v = 4.0 * sbv / (tp ? (double)tp : 1.0);
		break;
	case MDL_LOSS_VOCAB_PARALLEL:
	case MDL_LOSS_VOCAB_PARALLEL_FUSED:
	case MDL_LOSS_VOCAB_PARALLEL_TE:
	case MDL_LOSS_VOCAB_PARALLEL_TE_LEGACY:
		/* Megatron-Core's backward turns the saved softmax into the gradient in place and
		 * casts it to the logits' dtype, in the room the freed logits left (mdl_act_head);
		 * Transformer Engine's scales its saved gradient in place */
		v = 0;
		break;
	case MDL_LOSS_FULL:
		break;
	}
	/* a context-parallel rank holds 1/cp of the tokens' tensors, and the whole weight's */
	return (cp > 1 ? v / cp : v) + dq;
}

double mdl_act_chunk_saved(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp,
			   uint32_t layers)
{
	double per = mdl_act_layer_saved(a, j, tp, sp);
	uint32_t r = mdl_job_rc_layers(j, layers);
	if (r >= layers)
		return per;
	struct mdl_job none = *j;
	none.recompute = MDL_RC_NONE;
	return ((double)r * per + (double)(layers - r) * mdl_act_layer_saved(a, &none, tp, sp)) /
	       layers;
}

double mdl_act_total(const struct mdl_arch *a, const struct mdl_job *j)
{
	double b = (double)a->layers * mdl_act_layer_saved(a, j, 1, false);

	if (j->recompute == MDL_RC_FULL || j->recompute == MDL_RC_OP)
		b += mdl_act_layer_working(a, j, 1, false);
	b += mdl_act_layer_grads(a, j, 1);
	return b + mdl_act_embed(a, j, 1, false) + mdl_act_head(a, j, 1, false);
}
