"""Small fully connected networks in numpy (DL2 §4.1, §6.2): two hidden layers
of ReLU units, a softmax (policy) or linear (value) output, backpropagation and
Adam. Shapes: inputs (n, d_in), outputs (n, d_out)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class MLP:
    """``sizes`` = (d_in, h1, h2, d_out); weights ``W[k]`` (d_k, d_{k+1}), biases ``b[k]``."""

    sizes: tuple[int, ...]
    W: list[np.ndarray] = field(default_factory=list)
    b: list[np.ndarray] = field(default_factory=list)

    @classmethod
    def create(cls, sizes: tuple[int, ...], seed: int = 0) -> "MLP":
        rng = np.random.default_rng(seed)
        W = [rng.normal(0.0, np.sqrt(2.0 / a), (a, c)) for a, c in zip(sizes[:-1], sizes[1:])]  # He init
        W[-1] *= 0.01  # near-uniform policy / near-zero value at the start
        return cls(sizes=tuple(sizes), W=W, b=[np.zeros(c) for c in sizes[1:]])

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Output before the final activation (logits or value), and the layer inputs for backward."""
        acts = [x]
        h = x
        for k in range(len(self.W) - 1):
            h = np.maximum(h @ self.W[k] + self.b[k], 0.0)
            acts.append(h)
        return h @ self.W[-1] + self.b[-1], acts

    def backward(self, acts: list[np.ndarray], grad_out: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Gradients of a loss w.r.t. W and b, given d loss / d output (n, d_out)."""
        gW: list[np.ndarray] = [np.empty(0)] * len(self.W)
        gb: list[np.ndarray] = [np.empty(0)] * len(self.b)
        g = grad_out
        for k in range(len(self.W) - 1, -1, -1):
            gW[k] = acts[k].T @ g
            gb[k] = g.sum(axis=0)
            if k:
                g = (g @ self.W[k].T) * (acts[k] > 0)
        return gW, gb

    def params(self) -> list[np.ndarray]:
        return [*self.W, *self.b]

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        out = {f"{prefix}_sizes": np.array(self.sizes)}
        for k, (w, b) in enumerate(zip(self.W, self.b)):
            out[f"{prefix}_W{k}"], out[f"{prefix}_b{k}"] = w, b
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], prefix: str) -> "MLP":
        sizes = tuple(int(s) for s in arrays[f"{prefix}_sizes"])
        n = len(sizes) - 1
        return cls(sizes=sizes, W=[np.array(arrays[f"{prefix}_W{k}"]) for k in range(n)],
                   b=[np.array(arrays[f"{prefix}_b{k}"]) for k in range(n)])


def softmax(z: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Row-wise softmax; entries where ``mask`` is False get probability 0."""
    if mask is not None:
        z = np.where(mask, z, -np.inf)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def policy_gradient(logits: np.ndarray, mask: np.ndarray, actions: np.ndarray, weight: np.ndarray,
                    entropy: float = 0.0) -> tuple[float, np.ndarray]:
    """Loss mean_i[-weight_i · log π(a_i|s_i) - entropy · H(π(·|s_i))] and its gradient
    w.r.t. the logits (n, A). weight = 1 gives cross-entropy (supervised warm-up);
    weight = advantage gives the actor-critic update."""
    n = len(actions)
    p = softmax(logits, mask)
    logp = np.log(np.where(mask, np.maximum(p, 1e-300), 1.0))
    onehot = np.zeros_like(p)
    onehot[np.arange(n), actions] = 1.0
    H = -(np.where(mask, p * logp, 0.0)).sum(axis=1)
    loss = float(np.mean(-weight * logp[np.arange(n), actions] - entropy * H))
    grad = weight[:, None] * (p - onehot)
    if entropy:
        grad += entropy * np.where(mask, p * (logp + H[:, None]), 0.0)
    return loss, grad / n


class Adam:
    """Adam (Kingma & Ba) over a network's parameters."""

    def __init__(self, net: MLP, lr: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8):
        self.net, self.lr, self.beta1, self.beta2, self.eps = net, lr, beta1, beta2, eps
        self.m = [np.zeros_like(p) for p in net.params()]
        self.v = [np.zeros_like(p) for p in net.params()]
        self.t = 0

    def step(self, gW: list[np.ndarray], gb: list[np.ndarray]) -> None:
        self.t += 1
        grads = [*gW, *gb]
        params = self.net.params()
        for i, (p, g) in enumerate(zip(params, grads)):
            self.m[i] = self.beta1 * self.m[i] + (1 - self.beta1) * g
            self.v[i] = self.beta2 * self.v[i] + (1 - self.beta2) * g * g
            mhat = self.m[i] / (1 - self.beta1 ** self.t)
            vhat = self.v[i] / (1 - self.beta2 ** self.t)
            p -= self.lr * mhat / (np.sqrt(vhat) + self.eps)  # in place: W and b are updated
