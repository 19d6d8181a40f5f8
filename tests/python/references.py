"""Hand-written PyTorch implementations of the bundled models' formulas
(DESIGN.md, "Model semantics"), written directly from the math and
independent of the IR: per-relation masks, per-edge gathered weights
(einsum), and a per-node loop for the softmax. Slow and plain on purpose:
these are what the interpreter is checked against."""

import math

import torch
import torch.nn.functional as F


def segment_softmax(scores, dst, num_nodes):
    """Softmax of `scores` [E, ...] over the edges that share a destination,
    one node at a time with torch.softmax (which is numerically stable)."""
    out = torch.zeros_like(scores)
    for v in range(num_nodes):
        idx = (dst == v).nonzero().flatten()
        if idx.numel() > 0:
            out = out.index_copy(0, idx, torch.softmax(scores[idx], dim=0))
    return out


def rgcn(g, x, W, W_self, bias):
    """h_v = sum_r (1/|N_r(v)|) sum_{u in N_r(v)} x_u W_r + x_v W_self + b."""
    src, dst, et = g.src, g.dst, g.edge_type
    n = x.shape[0]
    out = x @ W_self + bias
    for r in range(W.shape[0]):
        mask = et == r
        s, d = src[mask], dst[mask]
        count = torch.zeros(n, dtype=x.dtype, device=x.device).index_add(
            0, d, torch.ones(d.numel(), dtype=x.dtype, device=x.device))
        total = torch.zeros(n, W.shape[2], dtype=x.dtype,
                            device=x.device).index_add(0, d, x[s] @ W[r])
        out = out + total / count.clamp(min=1)[:, None]
    return out


def rgat(g, x, W, a_src, a_dst, W_self, bias, heads, slope=0.2):
    """z = x_u W_r; s = a_src[r].z_u + a_dst[r].(x_v W_r) per head;
    alpha = softmax over all in-edges of v of leaky_relu(s);
    h_v = concat_h sum alpha z_u + x_v W_self + b."""
    src, dst, et = g.src, g.dst, g.edge_type
    n, e = x.shape[0], src.numel()
    out_dim = W.shape[2]
    d = out_dim // heads
    w = W[et]
    z = torch.einsum("ei,eio->eo", x[src], w).view(e, heads, d)
    zd = torch.einsum("ei,eio->eo", x[dst], w).view(e, heads, d)
    s = (z * a_src[et]).sum(-1) + (zd * a_dst[et]).sum(-1)
    alpha = segment_softmax(F.leaky_relu(s, slope), dst, n)
    agg = torch.zeros(n, heads, d, dtype=x.dtype, device=x.device).index_add(
        0, dst, alpha[..., None] * z)
    return agg.reshape(n, out_dim) + x @ W_self + bias


def hgt(g, x, K, Q, V, W_att, W_msg, mu, A, skip, heads):
    """k, q, m = x K/Q/V by node type; score = (k W_att[r]) . q * mu[r] /
    sqrt(d); alpha = softmax over all in-edges of v; t_v = concat_h sum
    alpha (m W_msg[r]); h_v = g (t_v A_tau(v)) + (1 - g) x_v with
    g = sigmoid(skip[tau(v)])."""
    src, dst, et, nt = g.src, g.dst, g.edge_type, g.node_type
    n, e = x.shape[0], src.numel()
    dim = K.shape[2]
    d = dim // heads

    def by_type(t, weight):
        return torch.einsum("ni,nio->no", t, weight[nt])

    k = by_type(x, K).view(n, heads, d)
    q = by_type(x, Q).view(n, heads, d)
    v = by_type(x, V).view(n, heads, d)
    kw = torch.einsum("ehi,ehio->eho", k[src], W_att[et])
    score = (kw * q[dst]).sum(-1) * mu[et] / math.sqrt(d)
    alpha = segment_softmax(score, dst, n)
    m = torch.einsum("ehi,ehio->eho", v[src], W_msg[et])
    t = torch.zeros(n, heads, d, dtype=x.dtype, device=x.device).index_add(
        0, dst, alpha[..., None] * m).reshape(n, dim)
    gate = torch.sigmoid(skip[nt])[:, None]
    return gate * by_type(t, A) + (1 - gate) * x
