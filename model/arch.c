/* arch — see arch.h. Defaults per model_type are data (family table); one reader walks it. */
#include "arch.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "file.h"

/*
 * Defaults for fields a config.json omits, per model_type, as the transformers library's
 * config classes define them (transformers v4.45, src/transformers/models/<type>/configuration_
 * <type>.py): LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, Gemma2Config, Phi3Config,
 * GPT2Config. kv_heads 0 means "= heads" (num_key_value_heads=None); head_dim 0 means
 * hidden/heads. Biases and norm shapes are not config fields but fixed by the modeling code:
 * Qwen2Attention builds q/k/v with bias=True; Gemma2DecoderLayer has four RMSNorms; GPT-2 uses
 * LayerNorm (weight and bias) and biases on every Conv1D.
 */
struct family {
	const char *model_type;
	/* json key names: gpt2 spells them differently */
	const char *k_hidden, *k_layers, *k_heads, *k_inter, *k_pos;
	uint64_t vocab, hidden, intermediate, layers, heads, kv_heads, head_dim, positions;
	uint32_t experts, experts_per_tok;
	bool tied, qkv_bias, o_bias, mlp_bias, norm_bias, gated, learned_pos;
	int norms_per_layer;
	const char *k_attn_drop, *k_resid_drop, *k_embd_drop; /* NULL: not a field (0.0) */
	double attn_drop, resid_drop, embd_drop;
};

static const struct family families[] = {
	{"llama", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32000, 4096, 11008, 32, 32, 0, 0, 2048, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0},
	{"mistral", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32000, 4096, 14336, 32, 32, 8, 0, 131072, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0},
	{"mixtral", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32000, 4096, 14336, 32, 32, 8, 0, 131072, 8, 2, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0},
	{"qwen2", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 151936, 4096, 22016, 32, 32, 32, 0, 32768, 0, 0, false, true,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0},
	{"gemma2", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 256000, 2304, 9216, 26, 8, 4, 256, 8192, 0, 0, true, false,
	 false, false, false, true, false, 4, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0},
	{"phi3", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32064, 3072, 8192, 32, 32, 0, 0, 4096, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", "resid_pdrop", "embd_pdrop", 0.0,
	 0.0, 0.0},
	{"gpt2", "n_embd", "n_layer", "n_head", "n_inner", "n_positions", 50257, 768, 0, 12, 12, 0,
	 0, 1024, 0, 0, true, true, true, true, true, false, true, 2, "attn_pdrop", "resid_pdrop",
	 "embd_pdrop", 0.1, 0.1, 0.1},
};

#define NFAMILIES (sizeof families / sizeof families[0])

const char *mdl_arch_supported(void)
{
	return "llama, mistral, mixtral, qwen2, gemma2, phi3, gpt2";
}

/* Upper bounds that keep every product below 2^62 and catch garbage early. */
#define MAX_DIM 1048576ull    /* hidden, head_dim, heads */
#define MAX_INTER 16777216ull /* intermediate size */
#define MAX_VOCAB 67108864ull /* vocabulary */
/* Layers: the deepest published transformers have 105-128 (Megatron 530B and 1T, Llama 3.1
 * 405B 126); 1024 leaves room for anything real while keeping a step graph of a few hundred
 * thousand tasks (a bad config.json of 100000 layers took 50 s and 714 MB in compare). */
#define MAX_LAYERS 1024ull
#define MAX_POS 1073741824ull
#define MAX_PARAMS 1e15 /* 10^15: beyond any model built; keeps counts exact in double */

/* Reads an optional whole-number field. 0 ok (absent leaves *v), -1 with err. */
static int get_uint(const cJSON *root, const char *key, uint64_t lo, uint64_t hi, uint64_t *v,
		    const char *origin, char *err, size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
	double d;

	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsNumber(it)) {
		snprintf(err, errlen, "config '%s': field '%s' must be a number", origin, key);
		return -1;
	}
	d = it->valuedouble; /* never valueint: it saturates at INT_MAX */
	if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi) {
		snprintf(err, errlen,
			 "config '%s': field '%s' must be a whole number from %llu to %llu, got %g",
			 origin, key, (unsigned long long)lo, (unsigned long long)hi, d);
		return -1;
	}
	*v = (uint64_t)d;
	return 0;
}

static int get_bool(const cJSON *root, const char *key, bool *v, const char *origin, char *err,
		    size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);

	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsBool(it)) {
		snprintf(err, errlen, "config '%s': field '%s' must be true or false", origin, key);
		return -1;
	}
	*v = cJSON_IsTrue(it);
	return 0;
}

static int get_prob(const cJSON *root, const char *key, double *v, const char *origin, char *err,
		    size_t errlen)
{
	const cJSON *it;

	if (!key)
		return 0;
	it = cJSON_GetObjectItemCaseSensitive(root, key);
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0.0 && it->valuedouble < 1.0)) {
		snprintf(err, errlen, "config '%s': field '%s' must be a probability in [0, 1)",
			 origin, key);
		return -1;
	}
	*v = it->valuedouble;
	return 0;
}

/* Warns (a->warning) about a config key within two edits of a key this family reads that the
 * config lacks: that key took its default. */
static void misspelled(const cJSON *root, const struct family *f, struct mdl_arch *a)
{
	const char *read[] = {"vocab_size",	     f->k_hidden,	    f->k_layers,
			      f->k_heads,	     f->k_inter,	    f->k_pos,
			      "tie_word_embeddings", "num_key_value_heads", "head_dim",
			      "attention_bias",	     "mlp_bias",	    "num_local_experts",
			      "num_experts_per_tok", f->k_attn_drop,	    f->k_resid_drop,
			      f->k_embd_drop};
	const char *absent[sizeof read / sizeof read[0]];
	int na = 0;
	const cJSON *it;

	a->warning[0] = '\0';
	for (size_t i = 0; i < sizeof read / sizeof read[0]; i++)
		if (read[i] && !cJSON_GetObjectItemCaseSensitive(root, read[i]))
			absent[na++] = read[i];
	cJSON_ArrayForEach(it, root)
	{
		const char *near = it->string ? cfg_did_you_mean(it->string, absent, na) : NULL;
		if (near) {
			snprintf(a->warning, sizeof a->warning,
				 "config key '%.60s' is not one tierplan reads; did you mean '%s'? "
				 "'%s' took its default",
				 it->string, near, near);
			return;
		}
	}
}

static void add(struct mdl_tensor *t, int *n, const char *name, uint64_t rows, uint64_t cols,
		unsigned target, bool matmul, uint32_t copies, uint32_t active)
{
	t[*n] = (struct mdl_tensor){name, rows, cols, target, matmul, copies, active};
	(*n)++;
}

/* Builds the per-layer and outer tensor inventory from the resolved dimensions. */
static void build_inventory(struct mdl_arch *a)
{
	uint64_t h = a->hidden, q = a->heads * a->head_dim, kv = a->kv_heads * a->head_dim;
	uint64_t I = a->intermediate;
	uint32_t E = a->experts ? a->experts : 1, k = a->experts ? a->experts_per_tok : 1;
	uint64_t nb = a->norm_bias ? 2 : 1; /* LayerNorm has a bias, RMSNorm does not */
	struct mdl_tensor *t = a->layer;
	int n = 0;

	add(t, &n, "input_norm", h * nb, 1, 0, false, 1, 1);
	add(t, &n, "q_proj", h, q, MDL_T_Q, true, 1, 1);
	add(t, &n, "k_proj", h, kv, MDL_T_K, true, 1, 1);
	add(t, &n, "v_proj", h, kv, MDL_T_V, true, 1, 1);
	if (a->qkv_bias) {
		add(t, &n, "q_proj.bias", q, 1, 0, false, 1, 1);
		add(t, &n, "k_proj.bias", kv, 1, 0, false, 1, 1);
		add(t, &n, "v_proj.bias", kv, 1, 0, false, 1, 1);
	}
	add(t, &n, "o_proj", q, h, MDL_T_O, true, 1, 1);
	if (a->o_bias)
		add(t, &n, "o_proj.bias", h, 1, 0, false, 1, 1);
	if (a->norms_per_layer == 4)
		add(t, &n, "post_attention_norm", h * nb, 1, 0, false, 1, 1);
	add(t, &n, "mlp_norm", h * nb, 1, 0, false, 1, 1);
	if (a->experts)
		add(t, &n, "router", h, E, 0, true, 1, 1);
	if (a->gated_mlp)
		add(t, &n, "gate_proj", h, I, MDL_T_GATE, true, E, k);
	add(t, &n, "up_proj", h, I, MDL_T_UP, true, E, k);
	add(t, &n, "down_proj", I, h, MDL_T_DOWN, true, E, k);
	if (a->mlp_bias) {
		if (a->gated_mlp)
			add(t, &n, "gate_proj.bias", I, 1, 0, false, E, k);
		add(t, &n, "up_proj.bias", I, 1, 0, false, E, k);
		add(t, &n, "down_proj.bias", h, 1, 0, false, E, k);
	}
	if (a->norms_per_layer == 4)
		add(t, &n, "post_feedforward_norm", h * nb, 1, 0, false, 1, 1);
	a->nlayer = n;

	n = 0;
	add(a->outer, &n, "embed_tokens", a->vocab, h, 0, false, 1, 1);
	if (a->learned_positions)
		add(a->outer, &n, "embed_positions", a->positions, h, 0, false, 1, 1);
	add(a->outer, &n, "final_norm", h * nb, 1, 0, false, 1, 1);
	/* a tied head stores no weights but still multiplies every token */
	add(a->outer, &n, "lm_head", h, a->vocab, 0, true, a->tied ? 0 : 1, 1);
	a->nouter = n;
}

void mdl_arch_counts(const struct mdl_arch *a, struct mdl_counts *c)
{
	uint64_t layer = 0, layer_active = 0, layer_mm = 0;

	memset(c, 0, sizeof *c);
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		uint64_t e = t->rows * t->cols;
		layer += e * t->copies;
		layer_active += e * t->active;
		if (t->matmul)
			layer_mm += e * t->active;
	}
	for (int i = 0; i < a->nouter; i++) {
		const struct mdl_tensor *t = &a->outer[i];
		uint64_t e = t->rows * t->cols;
		if (strcmp(t->name, "embed_tokens") == 0 || strcmp(t->name, "embed_positions") == 0)
			c->embed_params += e * t->copies;
		else
			c->head_params += e * t->copies;
		if (t->matmul)
			c->matmul_params += e;
	}
	c->layer_params = layer;
	c->params = c->embed_params + c->head_params + a->layers * layer;
	c->active_params = c->embed_params + c->head_params + a->layers * layer_active;
	c->matmul_params += a->layers * layer_mm;
}

static const struct family *find_family(const char *type)
{
	for (size_t i = 0; i < NFAMILIES; i++)
		if (strcmp(families[i].model_type, type) == 0)
			return &families[i];
	return NULL;
}

int mdl_arch_parse(const char *json, const char *origin, struct mdl_arch *a, char *err,
		   size_t errlen)
{
	cJSON *root = cJSON_Parse(json);
	const cJSON *mt;
	const struct family *f;
	int rc = -1;

	memset(a, 0, sizeof *a);
	if (!root) {
		snprintf(err, errlen, "config '%s': not valid JSON (near byte %ld)", origin,
			 (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - json : 0));
		return -1;
	}
	if (!cJSON_IsObject(root)) {
		snprintf(err, errlen, "config '%s': expected a JSON object", origin);
		goto out;
	}
	mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
	if (!cJSON_IsString(mt)) {
		snprintf(err, errlen, "config '%s': field 'model_type' is missing (supported: %s)",
			 origin, mdl_arch_supported());
		goto out;
	}
	f = find_family(mt->valuestring);
	if (!f) {
		snprintf(err, errlen, "config '%s': model_type '%.40s' is not supported (supported: %s)",
			 origin, mt->valuestring, mdl_arch_supported());
		goto out;
	}
	snprintf(a->model_type, sizeof a->model_type, "%s", f->model_type);
	a->vocab = f->vocab;
	a->hidden = f->hidden;
	a->intermediate = f->intermediate;
	a->layers = f->layers;
	a->heads = f->heads;
	a->kv_heads = f->kv_heads;
	a->head_dim = f->head_dim;
	a->positions = f->positions;
	a->experts = f->experts;
	a->experts_per_tok = f->experts_per_tok;
	a->tied = f->tied;
	a->gated_mlp = f->gated;
	a->learned_positions = f->learned_pos;
	a->attn_dropout = f->attn_drop;
	a->resid_dropout = f->resid_drop;
	a->embd_dropout = f->embd_drop;
	a->qkv_bias = f->qkv_bias;
	a->o_bias = f->o_bias;
	a->mlp_bias = f->mlp_bias;
	a->norm_bias = f->norm_bias;
	a->norms_per_layer = f->norms_per_layer;

	uint64_t ex = a->experts, ek = a->experts_per_tok;
	if (get_uint(root, "vocab_size", 1, MAX_VOCAB, &a->vocab, origin, err, errlen) ||
	    get_uint(root, f->k_hidden, 1, MAX_DIM, &a->hidden, origin, err, errlen) ||
	    get_uint(root, f->k_layers, 1, MAX_LAYERS, &a->layers, origin, err, errlen) ||
	    get_uint(root, f->k_heads, 1, MAX_DIM, &a->heads, origin, err, errlen) ||
	    get_uint(root, f->k_inter, 1, MAX_INTER, &a->intermediate, origin, err, errlen) ||
	    get_uint(root, f->k_pos, 1, MAX_POS, &a->positions, origin, err, errlen) ||
	    get_bool(root, "tie_word_embeddings", &a->tied, origin, err, errlen) ||
	    get_prob(root, f->k_attn_drop, &a->attn_dropout, origin, err, errlen) ||
	    get_prob(root, f->k_resid_drop, &a->resid_dropout, origin, err, errlen) ||
	    get_prob(root, f->k_embd_drop, &a->embd_dropout, origin, err, errlen))
		goto out;
	if (strcmp(f->model_type, "gpt2") != 0) {
		if (get_uint(root, "num_key_value_heads", 1, MAX_DIM, &a->kv_heads, origin, err,
			     errlen) ||
		    get_uint(root, "head_dim", 1, MAX_DIM, &a->head_dim, origin, err, errlen))
			goto out;
	}
	/* LlamaConfig and Gemma2Config: attention_bias puts biases on q, k, v and o; LlamaConfig:
	 * mlp_bias on gate, up and down */
	if (strcmp(f->model_type, "llama") == 0 || strcmp(f->model_type, "gemma2") == 0) {
		bool ab = false;
		if (get_bool(root, "attention_bias", &ab, origin, err, errlen))
			goto out;
		a->qkv_bias = a->o_bias = ab;
	}
	if (strcmp(f->model_type, "llama") == 0 &&
	    get_bool(root, "mlp_bias", &a->mlp_bias, origin, err, errlen))
		goto out;
	if (strcmp(f->model_type, "mixtral") == 0) {
		if (get_uint(root, "num_local_experts", 1, 4096, &ex, origin, err, errlen) ||
		    get_uint(root, "num_experts_per_tok", 1, 4096, &ek, origin, err, errlen))
			goto out;
		if (ek > ex) {
			snprintf(err, errlen,
				 "config '%s': field 'num_experts_per_tok' (%llu) exceeds "
				 "'num_local_experts' (%llu)",
				 origin, (unsigned long long)ek, (unsigned long long)ex);
			goto out;
		}
		a->experts = (uint32_t)ex;
		a->experts_per_tok = (uint32_t)ek;
	}
	if (a->intermediate == 0) /* GPT2Config: n_inner None means 4 * n_embd */
		a->intermediate = 4 * a->hidden;
	if (a->kv_heads == 0)
		a->kv_heads = a->heads;
	if (a->head_dim == 0) {
		if (a->hidden % a->heads) {
			snprintf(err, errlen,
				 "config '%s': hidden size %llu is not divisible by %llu heads "
				 "(set 'head_dim')",
				 origin, (unsigned long long)a->hidden,
				 (unsigned long long)a->heads);
			goto out;
		}
		a->head_dim = a->hidden / a->heads;
	}
	if (a->heads % a->kv_heads) {
		snprintf(err, errlen,
			 "config '%s': field 'num_key_value_heads' (%llu) must divide "
			 "'num_attention_heads' (%llu)",
			 origin, (unsigned long long)a->kv_heads, (unsigned long long)a->heads);
		goto out;
	}
	build_inventory(a);
	{
		/* the inventory's products fit in uint64 only for sane sizes: check in double */
		double total = 0;
		for (int i = 0; i < a->nlayer; i++)
			total += (double)a->layer[i].rows * (double)a->layer[i].cols *
				 a->layer[i].copies * (double)a->layers;
		total += 2.0 * (double)a->vocab * (double)a->hidden;
		if (total > MAX_PARAMS) {
			snprintf(err, errlen,
				 "config '%s': the model would have %.3g parameters, more than the "
				 "%.0e tierplan supports",
				 origin, total, MAX_PARAMS);
			goto out;
		}
	}
	misspelled(root, f, a);
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}

/*
 * A sweep or a search loads the same config.json for every point: each thread keeps its last
 * few loads, keyed by path and the file's stamp (model/file.h), so a point reads and parses it
 * once. Per thread, so nothing is shared between sweep workers.
 */
#define ARCH_MEMO 4
static _Thread_local struct {
	char path[1024];
	struct cfg_stamp st;
	struct mdl_arch a;
} arch_memo[ARCH_MEMO];
static _Thread_local unsigned arch_memo_next;

int mdl_arch_load(const char *path, struct mdl_arch *a, char *err, size_t errlen)
{
	struct cfg_stamp st;
	bool stamped = cfg_file_stamp(path, &st) == 0 && strlen(path) < sizeof arch_memo[0].path;

	for (int i = 0; stamped && i < ARCH_MEMO; i++)
		if (!strcmp(arch_memo[i].path, path) && !memcmp(&arch_memo[i].st, &st, sizeof st)) {
			*a = arch_memo[i].a;
			return 0;
		}
	/* the largest real config.json files are a few KiB; 4 MiB rejects garbage quickly */
	char *json = cfg_read_file(path, "config", 4u << 20, err, errlen);
	int rc;

	if (!json)
		return -1;
	rc = mdl_arch_parse(json, path, a, err, errlen);
	free(json);
	if (rc == 0 && !a->name[0]) {
		const char *base = strrchr(path, '/');
		snprintf(a->name, sizeof a->name, "%s", base ? base + 1 : path);
	}
	if (rc == 0 && stamped) {
		unsigned k = arch_memo_next++ % ARCH_MEMO;
		snprintf(arch_memo[k].path, sizeof arch_memo[k].path, "%s", path);
		arch_memo[k].st = st;
		arch_memo[k].a = *a;
	}
	return rc;
}

static const struct {
	const char *name;
	unsigned bit;
} target_names[] = {
	{"q", MDL_T_Q},       {"k", MDL_T_K},   {"v", MDL_T_V},       {"o", MDL_T_O},
	{"gate", MDL_T_GATE}, {"up", MDL_T_UP}, {"down", MDL_T_DOWN},
};

int mdl_parse_targets(const char *s, unsigned *mask, char *err, size_t errlen)
{
	char buf[256];
	unsigned m = 0;

	if (strcmp(s, "all") == 0) {
		*mask = MDL_T_ALL;
		return 0;
	}
	snprintf(buf, sizeof buf, "%s", s);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof target_names / sizeof target_names[0]; i++)
			if (strcmp(tok, target_names[i].name) == 0)
				break;
		if (i == sizeof target_names / sizeof target_names[0]) {
			snprintf(err, errlen,
				 "unknown LoRA target '%s' (allowed: q,k,v,o,gate,up,down or all)",
				 tok);
			return -1;
		}
		m |= target_names[i].bit;
	}
	if (!m) {
		snprintf(err, errlen, "no LoRA target given (allowed: q,k,v,o,gate,up,down or all)");
		return -1;
	}
	*mask = m;
	return 0;
}

char *mdl_targets_str(unsigned mask, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof target_names / sizeof target_names[0]; i++)
		if (mask & target_names[i].bit)
			used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s",
						 used ? "," : "", target_names[i].name);
	return buf;
}
