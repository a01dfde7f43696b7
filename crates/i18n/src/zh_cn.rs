//! The zh-CN catalog: every learner-facing message, keyed by its English text, in the terms the
//! zh-CN docs use (注意力, 分数, 概率, 查询, 键, 值, 头, 阶段, 事件, 单元格, 掩码, 梯度 …). Names that
//! the code and the docs keep in English in both languages (buffer and phase names such as `scores`
//! or `d_q`, `tracer`, `baseline`, `MHA`) stay as they are.

/// (English, 简体中文), each pair with the same `{name}` placeholders.
pub(crate) static MESSAGES: &[(&str, &str)] = &[
    (
        "      the dot product above is computed anyway (as in the reference code),",
        "      上面的点积照样计算（和参考实现一样），",
    ),
    (
        "      then overwritten with {masked} so that softmax gives it probability 0",
        "      然后被 {masked} 覆盖，这样 softmax 给它的概率为 0",
    ),
    ("   ◀ this element", "   ◀ 这个元素"),
    ("more than {max}", "超过 {max}"),
    ("Tracing failed", "追踪失败"),
    ("The gradient check failed", "梯度检查失败"),
    ("Training failed", "训练失败"),
    (
        "the {worker} thread panicked: {message}",
        "{worker} 线程崩溃（panic）：{message}",
    ),
    ("cannot start the {worker} thread: {e}", "无法启动 {worker} 线程：{e}"),
    (
        "the tracing thread ended without a result",
        "追踪线程没有给出结果就结束了",
    ),
    ("the check failed: {why}", "检查失败：{why}"),
    (
        "--save {path}: cannot write there: {e}",
        "--save {path}：无法写入那里：{e}",
    ),
    (
        "--load {path}: its loss is {loss}, not a number: the weights overflow f32, so training cannot start from them",
        "--load {path}：它的损失是 {loss}，不是一个数：权重超出了 f32 的范围，无法从它开始训练",
    ),
    (
        "--checkpoint {path}: its loss on {what} is {loss}, not a number: the weights overflow f32, so this checkpoint cannot be evaluated",
        "--checkpoint {path}：它在 {what} 上的损失是 {loss}，不是一个数：权重超出了 f32 的范围，无法评估这个检查点",
    ),
    (
        "layer {layer}'s attention is not finite on this prompt: the model's weights overflow f32",
        "第 {layer} 层的注意力在这个提示上不是有限值：模型的权重超出了 f32 的范围",
    ),
    (
        "the model's logits are not finite ({x}): its weights overflow f32, so nothing can be sampled from it",
        "模型的 logits 不是有限值（{x}）：权重超出了 f32 的范围，无法从中采样",
    ),
    (
        "shape [{dims_text}] has more elements than memory can address: use smaller sizes",
        "形状 [{dims_text}] 的元素个数超出内存可寻址的范围：请用更小的尺寸",
    ),
    ("  (next factor follows)", "  （下一个因子随后读取）"),
    ("  (want {want})", "  （应为 {want}）"),
    ("  Enter starts", "  Enter 开始"),
    ("  at probs[{off}]{masked}", "  位于 probs[{off}]{masked}"),
    ("  batch {b}", "  批次 {b}"),
    ("  correct  {values}", "  正确    {values}"),
    ("  fix the fields marked ✗", "  请先修正标 ✗ 的字段"),
    ("  global", "  全局"),
    (
        "  here s_tile[{off}] becomes e^(S − m) = e^({s} − {m}) = {p}, folded into acc; it is overwritten by the next tile",
        "  此时 s_tile[{off}] 变为 e^(S − m) = e^({s} − {m}) = {p}，累加进 acc；下一个分块会覆盖它",
    ),
    (
        "  leaves the correct run at event #{n}: {what}",
        "  在事件 #{n} 处离开正确的运行：{what}",
    ),
    ("  mistaken {values}", "  带错误  {values}"),
    (
        "  probs: {n} rows, each sums to 1 (min {lo}, max {hi})",
        "  probs：{n} 行，每行的和都是 1（最小 {lo}，最大 {hi}）",
    ),
    (
        "  probs: {n} rows, {off} of them do not sum to 1: their scores overflowed f32",
        "  probs：{n} 行，其中 {off} 行的和不是 1：它们的分数超出了 f32 的范围",
    ),
    ("  t: next tab", "  t：下一个标签页"),
    (
        "  the shares of query heads h0..h{last}: {heads}",
        "  查询头 h0..h{last} 各自的份额：{heads}",
    ),
    ("  tile-local (on chip)", "  tile 本地（片上）"),
    (
        "  {name} [{dims}]: min {lo}, mean {mean}, max {hi}",
        "  {name} [{dims}]：最小 {lo}，平均 {mean}，最大 {hi}",
    ),
    ("  ·· masked", "  ·· 被掩码"),
    ("  … ({n} pairs in all)", "  …（共 {n} 对）"),
    ("  ≠ correct", "  ≠ 正确"),
    ("  ▪▪ read this iteration", "  ▪▪ 本次迭代已读"),
    ("  ◀▶ this access", "  ◀▶ 本次访问"),
    ("unwritten", "尚未写入"),
    (" about · built into attn-trace ", " 简介 · 内置于 attn-trace "),
    (
        "its scenario {path} is not one of the shipped scenarios",
        "它的场景 {path} 不是随程序提供的场景之一",
    ),
    ("{name} is not a shipped scenario", "{name} 不是随程序提供的场景"),
    ("{name} is not a shipped lesson", "{name} 不是随程序提供的课程"),
    ("masked", "被掩码"),
    ("written this phase", "本阶段写入"),
    ("this access", "本次访问"),
    ("written", "已写入"),
    ("current", "当前"),
    (
        "memory: a cell not written yet (its zero is no result)",
        "内存：尚未写入的单元格（它的 0 不是结果）",
    ),
    (
        "memory: a masked score, crossed out (·· in a heat grid)",
        "内存：被掩码的分数，划掉显示（热力图中为 ··）",
    ),
    (
        "memory: written in this phase (underlined in a heat grid)",
        "内存：本阶段写入的单元格（热力图中加下划线）",
    ),
    (
        "memory: this access, a read; a write is drawn red (◀▶ in a heat grid)",
        "内存：本次访问，读取；写入用红色显示（热力图中为 ◀▶）",
    ),
    (" #{n} ?  (quiz: predict it)", " #{n} ?  （测验：预测它）"),
    (" (built in)", "（内置）"),
    (" (did you mean '{s}'?)", "（是不是想写 '{s}'？）"),
    (" (did you mean {s}?)", "（是不是想写 {s}？）"),
    (" (masked: j > i)", "（被掩码：j > i）"),
    (
        " (that is the access after it, {key})",
        "（那是它之后的那次访问，{key}）",
    ),
    (
        " (that is {buf}[{off}], the access after it)",
        "（那是它之后的那次访问 {buf}[{off}]）",
    ),
    (" ? keys", " ? 按键"),
    (" Attention map ", " 注意力图 "),
    (" Code ", " 代码 "),
    (" Code · {file} ", " 代码 · {file} "),
    (" Code · {file}:{l} ", " 代码 · {file}:{l} "),
    (" Compare {left} and {right}", " 对照 {left} 和 {right}"),
    (" Compare · {phase} · {element}", " 对照 · {phase} · {element}"),
    (" Event log · {n} events ", " 事件日志 · {n} 个事件 "),
    (" Gradient check · L = Σ out ⊙ d_out ", " 梯度校验 · L = Σ out ⊙ d_out "),
    (" Keys · {screen} ", " 按键 · {screen} "),
    (
        " L={l} layers · C={c} · H={h} ({kernel}) · seq_len {t}",
        " L={l} 层 · C={c} · H={h}（{kernel}）· seq_len {t}",
    ),
    (" Memory ", " 内存 "),
    (" Open {what} · {dir}", " 打开{what} · {dir}"),
    (
        " Quiz · Enter check · v reveal · n skip · l level · Q stop ",
        " 测验 · Enter 检查 · v 揭晓 · n 跳过 · l 级别 · Q 退出 ",
    ),
    (" Start training ", " 开始训练 "),
    (
        " The prompt's bytes are the tokens: T = its length. The tracer replays the layer's attention with x = that layer's LayerNorm output, forward and backward (from the prompt's next-byte loss).",
        " 提示词的字节就是 token：T = 它的长度。tracer 用 x = 这一层 LayerNorm 的输出重放这一层的注意力，前向和反向都有（反向来自提示词的下一字节损失）。",
    ),
    (" Trace the trained model ", " 追踪训练好的模型 "),
    (" Train TinyGPT ", " 训练 TinyGPT "),
    (" Variables ", " 变量 "),
    (
        " ]/[ phase · ←→ j · ↑↓ i · h head · Enter trace {right_name} here · ? keys · Esc back",
        " ]/[ 阶段 · ←→ j · ↑↓ i · h 头 · Enter 在 {right_name} 上追踪 · ? 按键 · Esc 返回",
    ),
    (
        " ]/[ phase · ←→ j · ↑↓ i · h head · Enter trace · ? keys",
        " ]/[ 阶段 · ←→ j · ↑↓ i · h 头 · Enter 追踪 · ? 按键",
    ),
    (
        " ]/[ · ←→ · ↑↓ · h · Enter · ? keys",
        " ]/[ · ←→ · ↑↓ · h · Enter · ? 按键",
    ),
    (" about ", " 简介 "),
    (" and ", " 和 "),
    (
        " and scales the kept ones by 1/(1 − p) = {r}",
        "，并把保留的乘以 1/(1 − p) = {r}",
    ),
    (" and {n} more", " 等另外 {n} 个"),
    (
        " arrows cell · Tab head · ]/[ layer · Enter trace · e export · ? keys · q back",
        " 方向键 格子 · Tab 头 · ]/[ 层 · Enter 追踪 · e 导出 · ? 按键 · q 返回",
    ),
    (
        " arrows cell · Tab head · ]/[ layer · Enter/click trace this probability · t trace layer · e export · ? keys · q back",
        " 方向键 格子 · Tab 头 · ]/[ 层 · Enter/单击 追踪这个概率 · t 追踪这一层 · e 导出 · ? 按键 · q 返回",
    ),
    (" checkpoints ", " 检查点 "),
    (" configuration ", " 配置 "),
    (" data: ", " 数据："),
    (" e exports this layer to {path}", " e 把这一层导出到 {path}"),
    (" flash · ds_tile, on chip ", " flash · ds_tile，片上 "),
    (" flash · s_tile, on chip ", " flash · s_tile，片上 "),
    (" goto: {p}▏", " 跳转：{p}▏"),
    (
        " goto: {p}▏ (123 · b=0 h=1 i=2 j=1 · scores[16] · Enter/Esc)",
        " 跳转：{p}▏（123 · b=0 h=1 i=2 j=1 · scores[16] · Enter/Esc）",
    ),
    (
        " goto: {p}▏ (123 · b=0 h=1 i=2 j=1 · scores[16])",
        " 跳转：{p}▏（123 · b=0 h=1 i=2 j=1 · scores[16]）",
    ),
    (" layer (↑/↓) ", " 层（↑/↓）"),
    (
        " layer {layer} head {h}: P[i={i} '{ci}', j={j} '{cj}'] = ",
        " 层 {layer} 头 {h}：P[i={i} '{ci}', j={j} '{cj}'] = ",
    ),
    (" layer {l} · head {h} ", " 层 {l} · 头 {h} "),
    (" layer {l} · one head ", " 层 {l} · 一个头 "),
    (" loss (l: log scale) ", " 损失（l：对数刻度）"),
    (" loss (log scale · l linear) ", " 损失（对数刻度 · l 线性）"),
    (" n new run · q back", " n 新的训练 · q 返回"),
    (
        " n/p step · ]/[ phase · d divergence · Enter trace · ? keys",
        " n/p 单步 · ]/[ 阶段 · d 分歧点 · Enter 追踪 · ? 按键",
    ),
    (
        " n/p step · j/k iter · J/K outer · ]/[ phase · g goto · w/r who · b/c break · f pass · Tab kernel · ? keys",
        " n/p 单步 · j/k 迭代 · J/K 外层 · ]/[ 阶段 · g 跳转 · w/r 写读 · b/c 断点 · f 遍 · Tab 内核 · ? 按键",
    ),
    (
        " n/p step · j/k iter · ]/[ phase · d divergence · Enter trace · t panel · ? keys · q back",
        " n/p 单步 · j/k 迭代 · ]/[ 阶段 · d 分歧点 · Enter 追踪 · t 面板 · ? 按键 · q 返回",
    ),
    (
        " n/p step · j/k iter · ]/[ phase · g goto · ? keys",
        " n/p 单步 · j/k 迭代 · ]/[ 阶段 · g 跳转 · ? 按键",
    ),
    (
        " n/p step · j/k iter · ]/[ phase · g goto · w/r · b/c · f · Tab · ? keys",
        " n/p 单步 · j/k 迭代 · ]/[ 阶段 · g 跳转 · w/r · b/c · f · Tab · ? 按键",
    ),
    (" n/p · d divergence · ? keys", " n/p · d 分歧点 · ? 按键"),
    (" n/p · j/k · ]/[ · g · ? keys", " n/p · j/k · ]/[ · g · ? 按键"),
    (" no {phase} here: ", " 这里没有 {phase}："),
    (" not shown for lack of room: {hidden}", " 因空间不够未显示：{hidden}"),
    (" or type a path ", " 或者输入路径 "),
    (" progress ", " 进度 "),
    (" prompt ", " 提示词 "),
    (" query {i} attends most to {top}", " 查询 {i} 最关注 {top}"),
    (
        " quiz {level} · {phase} {score} · v reveal · n skip · Q stop",
        " 测验 {level} · {phase} {score} · v 揭晓 · n 跳过 · Q 退出",
    ),
    (
        " quiz {level} · {phase} {score} · v reveal · n skip · l level · Q stop",
        " 测验 {level} · {phase} {score} · v 揭晓 · n 跳过 · l 级别 · Q 退出",
    ),
    (" quiz {phase} {score} · ? keys", " 测验 {phase} {score} · ? 按键"),
    (
        " s save → {path} · t trace · l log · n new run · q back",
        " s 保存 → {path} · t 追踪 · l 对数 · n 新的训练 · q 返回",
    ),
    (" same element, two kernels ", " 同一元素，两个内核 "),
    (" same element, two layouts ", " 同一个元素，两种布局 "),
    (" sample ", " 样本 "),
    (" sample at step {step} (greedy) ", " 第 {step} 步的样本（贪心）"),
    (
        " sample at step {step} (temperature 0.8) ",
        " 第 {step} 步的样本（温度 0.8）",
    ),
    (" scenarios ", " 场景 "),
    (" selected ", " 选中 "),
    (
        " space pause · s save → {path} · x stop · t trace · l log · q back",
        " 空格 暂停 · s 保存 → {path} · x 停止 · t 追踪 · l 对数 · q 返回",
    ),
    (
        " space resume · s save → {path} · x stop · t trace · l log · q back",
        " 空格 继续 · s 保存 → {path} · x 停止 · t 追踪 · l 对数 · q 返回",
    ),
    (" step {step}/{len} │ {phase} ", " 第 {step}/{len} 步 │ {phase} "),
    (
        " step {step}/{len} │ {variant} │ {phase} │ {diverge} ",
        " 第 {step}/{len} 步 │ {variant} │ {phase} │ {diverge} ",
    ),
    (" training failed ", " 训练失败 "),
    (
        " type the prompt · Backspace · Delete clears · ↑/↓ layer · Enter attention map · Esc back",
        " 输入提示词 · Backspace · Delete 清空 · ↑/↓ 层 · Enter 注意力图 · Esc 返回",
    ),
    (" view of [{dims}]", "，[{dims}] 的视图"),
    (" weights: {label}", " 权重：{label}"),
    (" what it does downstream ", " 下游影响 "),
    (
        " {more} {first}-{last} of {n} ",
        " {more} 第 {first}-{last} 行，共 {n} 行 ",
    ),
    (" {n} parameters", " {n} 个参数"),
    (" · code (t: memory)", " · 代码（t：内存）"),
    (" · here runs MISTAKE", " · 这里运行 MISTAKE"),
    (" · memory (t: code)", " · 内存（t：代码）"),
    (
        " · tile rows {name} {first}..={last}",
        " · tile 所在行 {name} {first}..={last}",
    ),
    (" · w: the built-in one", " · w：内置的那个"),
    (" · {kv} of {h} k/v heads", " · {h} 个头共享 {kv} 个键/值头"),
    (
        " · {tokens} tokens per step · {heads} heads of D = {d}",
        " · 每步 {tokens} 个 token · {heads} 个头，每个 D = {d}",
    ),
    (" ↑ {n} more ", " ↑ 还有 {n} 项 "),
    (
        " ↑/↓ choose · Enter open · ← parent folder · ? keys · Esc back",
        " ↑/↓ 选择 · Enter 打开 · ← 上一级文件夹 · ? 按键 · Esc 返回",
    ),
    (
        " ↑/↓ field · type to edit · Delete clears · ←/→ choose · Enter start · Esc back",
        " ↑/↓ 字段 · 输入以编辑 · Delete 清空 · ←/→ 选择 · Enter 开始 · Esc 返回",
    ),
    (
        " ↑↓ choose · Enter open · ← up · ? keys",
        " ↑↓ 选择 · Enter 打开 · ← 上一级 · ? 按键",
    ),
    (" ↓ {below} more ", " ↓ 还有 {below} 项 "),
    (
        "\"{mistake}\" is a mistake of grouped-query attention's backward pass: set [run].variants = [\"gqa\"]",
        "\"{mistake}\" 是分组查询注意力反向传播中的错误：请设置 [run].variants = [\"gqa\"]",
    ),
    (
        "\"{mistake}\" is in the gradients: add \"backward\" to [run].passes",
        "\"{mistake}\" 出在梯度里：请在 [run].passes 中加入 \"backward\"",
    ),
    (
        "\"{mistake}\" needs query heads that share a key/value head: set [shape].H_kv below H = {heads}",
        "\"{mistake}\" 需要多个查询头共享一个键/值头：请把 [shape].H_kv 设为小于 H = {heads}",
    ),
    ("\"{mistake}\" {why}", "\"{mistake}\"{why}"),
    (
        "\"{part}\" is not key=value; write e.g. b=0,h=1,i=2,j=1",
        "\"{part}\" 不是 key=value 的形式；请写成例如 b=0,h=1,i=2,j=1",
    ),
    (
        "\"{title}\" does not trace the {variant} kernel: it runs {runs}. Open a scenario that runs both, or press w on the menu for the built-in walkthrough.",
        "“{title}”没有追踪 {variant} 内核（它运行的内核：{runs}）。请打开一个两者都运行的场景，或者在菜单里按 w 使用内置的 walkthrough。",
    ),
    ("(invalid: see below)", "（无效：见下方）"),
    (
        "(no about, and no comment at its top)",
        "（没有 about，开头也没有注释）",
    ),
    ("(no source for this event)", "（这个事件没有源代码）"),
    ("(outside every loop)", "（不在任何循环中）"),
    (
        "(the first sample comes after a few steps)",
        "（几步之后出现第一个样本）",
    ),
    ("(the {phase} pass of {file})", "（{phase} 这一遍，{file}）"),
    (", head h={h}", "，头 h={h}"),
    (", rope {pairs} base {base}", "，rope {pairs} base {base}"),
    (", turned back by its negative", "，反向时转过它的相反数"),
    (", with optimizer state", "，含优化器状态"),
    (
        "--batch must be 1..=4096, got {n}",
        "--batch 必须在 1..=4096 之间，实际是 {n}",
    ),
    (
        "--dataset {name}: unknown; the built-in datasets are {names}",
        "--dataset {name}：未知；内置的数据集有 {names}",
    ),
    (
        "--load {path}: its learning rate {msg}; give --lr to resume with another",
        "--load {path}：它的学习率{msg}；请用 --lr 指定另一个学习率继续训练",
    ),
    ("--log-every must be at least 1", "--log-every 至少为 1"),
    (
        "--phase {ph} belongs to the {pass} pass, not to --pass {p}",
        "--phase {ph} 属于 {pass} 这一遍，而不是 --pass {p}",
    ),
    (
        "--prompt is empty: give at least one byte to continue",
        "--prompt 为空：请至少给出一个字节让模型续写",
    ),
    (
        "--rope {given} does not match the checkpoint's rope {have}; leave it out when resuming",
        "--rope {given} 与检查点的 rope {have} 不符；续训时请省略它",
    ),
    (
        "--save {path}: is a directory; give a file name",
        "--save {path}：是一个目录；请给出文件名",
    ),
    (
        "--save {path}: the directory {dir} does not exist",
        "--save {path}：目录 {dir} 不存在",
    ),
    (
        "--temp must be a number ≥ 0, got {temp}",
        "--temp 必须是 ≥ 0 的数，实际是 {temp}",
    ),
    ("../  (parent folder)", "../  （上一级文件夹）"),
    ("0 (the baseline has a single head)", "0（baseline 只有一个头）"),
    ("0 (the only index, since {dim} = 1)", "0（唯一的下标，因为 {dim} = 1）"),
    ("0..={i}, the cached positions", "0..={i}，即缓存中的位置"),
    (
        "1. Gradient of the probability (weighted_sum_back)",
        "1. 概率的梯度（weighted_sum_back）",
    ),
    (
        "1. The dot product of query i={i} and key j={j}",
        "1. 查询 i={i} 与键 j={j} 的点积",
    ),
    ("1. The tiles", "1. 分块"),
    ("2. P recomputed from lse", "2. 由 lse 重新计算 P"),
    ("2. Scale, mask and write", "2. 缩放、掩码和写入"),
    ("2. Skipped", "2. 跳过"),
    (
        "2. Softmax backward (softmax_back)",
        "2. softmax 的反向传播（softmax_back）",
    ),
    ("2. The score, on chip", "2. 分数，在片上"),
    (
        "3. Checked by finite differences (L = Σ out ⊙ d_out)",
        "3. 用有限差分校验（L = Σ out ⊙ d_out）",
    ),
    ("3. Into d_q and d_k (scores_back)", "3. 流入 d_q 和 d_k（scores_back）"),
    (
        "3. Online softmax of row i, key tile by key tile",
        "3. 第 i 行的在线 softmax，一个键分块接一个键分块",
    ),
    (
        "3. Softmax of row (b={b}{head}, i={i})",
        "3. 行（b={b}{head}，i={i}）的 softmax",
    ),
    ("3. dS = P ⊙ (dP − D_i)", "3. dS = P ⊙ (dP − D_i)"),
    (
        "4. Checked by finite differences (L = Σ out ⊙ d_out)",
        "4. 用有限差分校验（L = Σ out ⊙ d_out）",
    ),
    ("4. Turned back (rope_back)", "4. 转回去（rope_back）"),
    ("4. Weighted sum for query i={i}", "4. 查询 i={i} 的加权求和"),
    ("4. Written once: att and lse", "4. 只写一次：att 和 lse"),
    ("; {path} was not written", "；没有写入 {path}"),
    ("AdamW learning rate", "AdamW 学习率"),
    ("B, sequences per step", "B，每步的序列数"),
    (
        "B={b} {queries}T={t} C={c} H={h} (D={d}), {mask}, {passes}, {start}",
        "B={b} {queries}T={t} C={c} H={h} (D={d})，{mask}，{passes}，{start}",
    ),
    ("Back to the built-in walkthrough", "回到内置的 walkthrough"),
    (
        "Before the scores: rotary positions, query i={i} turned by {i}·θ_m, key j={j} by {j}·θ_m (the rope pass)",
        "分数之前：旋转位置编码，查询 i={i} 转过 {i}·θ_m，键 j={j} 转过 {j}·θ_m（rope 这一遍）",
    ),
    (
        "Before the scores: the key/value cache at step t={i}",
        "分数之前：第 t={i} 步时的键/值缓存",
    ),
    (
        "C = {c} is not divisible by H = {h}: every head needs D = C/H whole channels",
        "C = {c} 不能被 H = {h} 整除：每个头需要 D = C/H 个完整的通道",
    ),
    ("C, channels of every token", "C，每个 token 的通道数"),
    ("Cannot open this checkpoint", "无法打开这个检查点"),
    ("Cannot open this mistake", "无法打开这个错误示例"),
    ("Cannot open this scenario", "无法打开这个场景"),
    ("Code", "代码"),
    ("Compare", "对照"),
    (
        "Compare needs a scenario that traces two kernels it can pair: baseline and mha, mha and gqa, or mha and flash.",
        "对照需要一个追踪了可配对的两个内核的场景：baseline 与 mha、mha 与 gqa，或 mha 与 flash。",
    ),
    ("Compare {left} and {right}", "对照 {left} 和 {right}"),
    (
        "DISAGREE: the finite difference is good to ±{error}",
        "不一致：有限差分的误差只有 ±{error}",
    ),
    (
        "D_i = rowsum(dO ∘ O) = {d} (delta, read at #{n})",
        "D_i = rowsum(dO ∘ O) = {d}（delta，在 #{n} 读取）",
    ),
    (
        "D_i = Σ_d dO[i,d]·O[i,d]   (O = att, dO = d_att)",
        "D_i = Σ_d dO[i,d]·O[i,d]   （O = att，dO = d_att）",
    ),
    (
        "D_i = Σ_d dO[i,d]·O[i,d] = {d_i} (delta, read at event #{n})",
        "D_i = Σ_d dO[i,d]·O[i,d] = {d_i}（delta，在事件 #{n} 读取）",
    ),
    ("ETA", "剩余时间"),
    ("Enter opens the folder {dir}", "Enter 打开文件夹 {dir}"),
    (
        "Entries 1-3 step through the built-in MHA walkthrough again.",
        "第 1 到 3 项重新单步执行内置的 MHA walkthrough。",
    ),
    ("Esc cancels", "Esc 取消"),
    (
        "H = {h} is not divisible by H_kv = {h_kv}: each key/value head serves H/H_kv query heads (try a divisor of {h})",
        "H = {h} 不能被 H_kv = {h_kv} 整除：每个键/值头服务 H/H_kv 个查询头（试试 {h} 的约数）",
    ),
    (
        "H heads of D = C/H channels read from the same q, k, v rows: scores [B,H,T,T], scale 1/√D.",
        "H 个头，每个头 D = C/H 个通道，从同样的 q、k、v 行中读取：分数 [B,H,T,T]，缩放 1/√D。",
    ),
    ("H, divides d_model (1: baseline)", "H，整除 d_model（1：baseline）"),
    ("H_kv: divides H (empty: H)", "H_kv：须整除 H（留空：等于 H）"),
    ("Help", "帮助"),
    (
        "How many global-memory reads and writes the plain kernel and FlashAttention make as T grows, per tile size; c there: their cache misses, simulated.",
        "随着 T 增大，普通内核和 FlashAttention 各自对全局内存做多少次读写，按分块大小列出；在那里按 c：它们的缓存未命中（模拟）。",
    ),
    (
        "K_tile, V_tile ← k, v rows j0..j1 (global → tile)",
        "K_tile、V_tile ← k、v 的第 j0..j1 行（全局 → tile）",
    ),
    (
        "K_tile, V_tile ← k, v rows j0..j1 (global → tile);  dK_tile = dV_tile = 0",
        "K_tile、V_tile ← k、v 的第 j0..j1 行（全局 → tile）；dK_tile = dV_tile = 0",
    ),
    ("L, transformer blocks", "L，transformer 块数"),
    (
        "Leave attn-trace (q from the menu does the same).",
        "退出 attn-trace（在菜单里按 q 也一样）。",
    ),
    ("Log", "日志"),
    ("MHA kernel", "MHA 内核"),
    ("Memory", "内存"),
    ("Memory traffic: naive vs flash", "内存流量：朴素实现与 flash"),
    ("Mistakes gallery", "错误示例集"),
    ("Not traced", "没有追踪"),
    (
        "One head over all C channels: scores [B,T,T], scale 1/√C.",
        "一个头覆盖全部 C 个通道：分数 [B,T,T]，缩放 1/√C。",
    ),
    ("Open checkpoint", "打开检查点"),
    ("Open checkpoint…", "打开检查点…"),
    ("Open scenario", "打开场景"),
    ("Open scenario…", "打开场景…"),
    ("Opening {title}", "正在打开 {title}"),
    (
        "P = 0 for a masked pair, so its score gradient is 0",
        "被掩码的位置对 P = 0，所以它的分数梯度为 0",
    ),
    (
        "P = e^(S − lse) = e^({s} − {lse}) = {p}: the probability naive attention stores in probs, never written here",
        "P = e^(S − lse) = e^({s} − {lse}) = {p}：朴素注意力存在 probs 里的概率，这里从不写入",
    ),
    (
        "P = e^(S − lse) = e^({s} − {lse}) = {p}: written nowhere",
        "P = e^(S − lse) = e^({s} − {lse}) = {p}：从未写入任何地方",
    ),
    (
        "P = e^(S − lse) = {p} (s_tile[{off}], #{n}): recomputed, forward stored only lse",
        "P = e^(S − lse) = {p}（s_tile[{off}]，#{n}）：重新计算，前向只保存了 lse",
    ),
    (
        "P = e^(Σ_d q_tile·k_tile / √{d} − lse) = e^(S − {lse}) = {p} (s_tile[{off}], event #{n})",
        "P = e^(Σ_d q_tile·k_tile / √{d} − lse) = e^(S − {lse}) = {p}（s_tile[{off}]，事件 #{n}）",
    ),
    (
        "P[b={b}, h={h}, i={i}, j={j}] of the flash variant, {pass} pass (B={B}, T={T}, C={C}, H={H}, D={d}, {mask}): never stored, computed tile by tile",
        "flash 变体的 P[b={b}, h={h}, i={i}, j={j}]，{pass}传播（B={B}, T={T}, C={C}, H={H}, D={d}，{mask}）：从不保存，逐个分块计算",
    ),
    (
        "P[i,j]: stored by MHA, never by flash",
        "P[i,j]：MHA 保存它，flash 从不保存",
    ),
    (
        "P_tile = e^(Q_tile·K_tileᵀ/√D − lse)   (recomputed, never stored)",
        "P_tile = e^(Q_tile·K_tileᵀ/√D − lse)   （重新计算，从不保存）",
    ),
    (
        "Pick a shipped scenario from scenarios/ or type the path of your own.",
        "从 scenarios/ 中选一个随附的场景，或者输入你自己的场景路径。",
    ),
    (
        "Q_tile ← q rows i0..i1 (global → tile);  m = −∞, l = 0, acc = 0",
        "Q_tile ← q 的第 i0..i1 行（全局 → tile）；m = −∞，l = 0，acc = 0",
    ),
    (
        "Q_tile, dO_tile ← q, d_att rows i0..i1 (global → tile)",
        "Q_tile、dO_tile ← q、d_att 的第 i0..i1 行（全局 → tile）",
    ),
    ("Quit", "退出"),
    ("Quiz · {level} · ", "测验 · {level} · "),
    ("Quiz · {phase} ({pass}) done", "测验 · {phase}（{pass}）完成"),
    ("S = -1e9 (#{n}): masked, {why}", "S = -1e9（#{n}）：被掩码，{why}"),
    ("S = q·k/√D = {s} (#{n})", "S = q·k/√D = {s}（#{n}）"),
    (
        "S = Σ_d q_tile[{ii},d]·k_tile[{jj},d] = {terms}",
        "S = Σ_d q_tile[{ii},d]·k_tile[{jj},d] = {terms}",
    ),
    ("Step through baseline attention", "单步执行 baseline 注意力"),
    ("Step through multi-head attention", "单步执行多头注意力"),
    ("T = {n} of at most {max} ", "T = {n}，最多 {max} "),
    ("T, tokens of context", "T，上下文的 token 数"),
    (
        "The menu's keys. On every screen, ? lists that screen's keys.",
        "菜单的按键。在每个界面上，? 都会列出那个界面的按键。",
    ),
    ("The mistaken run ({names})", "带错误的运行（{names}）"),
    (
        "The same input through two kernels, phase by phase: baseline and MHA (layouts, scales), MHA and GQA, or MHA and flash (P stored or never stored, and the traffic).",
        "同一输入经过两个内核，逐阶段对照：baseline 与 MHA（布局、缩放），MHA 与 GQA，或 MHA 与 flash（P 是否保存，以及访存量）。",
    ),
    (
        "TinyGPT layer {layer} on \"{prompt}\"",
        "TinyGPT 第 {layer} 层，提示词 \"{prompt}\"",
    ),
    (
        "Trace the attention of a model saved by the train screen or attn-trace train --save.",
        "追踪由训练界面或 attn-trace train --save 保存的模型的注意力。",
    ),
    ("Train TinyGPT", "训练 TinyGPT"),
    (
        "Train a tiny GPT, watch it learn, then trace its attention.",
        "训练一个很小的 GPT，看它学习，然后追踪它的注意力。",
    ),
    ("Vars", "变量"),
    (
        "[bracketed]: this element's term, its probability {p} times channel {ch} of v row j={j}",
        "[方括号]：这个元素的那一项，即它的概率 {p} 乘以 v 第 j={j} 行的通道 {ch}",
    ),
    (
        "a SCENARIO (or --sweep) is required",
        "需要一个 SCENARIO（或者 --sweep）",
    ),
    ("a boolean {raw}", "布尔值 {raw}"),
    (
        "a cell is written like q[10] or scores[0,1,2,1]",
        "单元格的写法是 q[10] 或 scores[0,1,2,1]",
    ),
    ("a command is required", "需要一个子命令"),
    ("a data file", "数据文件"),
    ("a date {raw}", "日期 {raw}"),
    (
        "a decode run has no score for j={j} > i={i}: at step {i} key {j} is not generated yet",
        "解码运行中没有 j={j} > i={i} 的分数：第 {i} 步时键 {j} 还没有生成",
    ),
    ("a float {raw}", "浮点数 {raw}"),
    ("a gradient", "梯度"),
    ("a mistaken run is forward only", "带错误的运行只有前向"),
    ("a non-negative integer", "非负整数"),
    ("a parameter", "参数"),
    ("a positive integer", "正整数"),
    ("a read of {buf}", "对 {buf} 的一次读"),
    ("a scenario file", "场景文件"),
    ("a string {raw}", "字符串 {raw}"),
    ("a table", "表"),
    ("a write of {buf}", "对 {buf} 的一次写"),
    (
        "after every visible pair: {total}",
        "累加完所有可见的位置对之后：{total}",
    ),
    ("after {prompt}:", "在 {prompt} 之后："),
    ("agree", "一致"),
    (
        "agree within the finite difference's error (±{error})",
        "在有限差分的误差（±{error}）内一致",
    ),
    (
        "an S×T = {s}×{t} matrix of 0 and 1 (1: the query may see the key)",
        "一个由 0 和 1 组成的 S×T = {s}×{t} 矩阵（1：这个查询可以看到这个键）",
    ),
    ("an activation", "激活值"),
    ("an argument", "某个参数"),
    ("an array {raw}", "数组 {raw}"),
    (
        "an index in 0..{size} ({dim} = {size})",
        "0..{size} 中的一个下标（{dim} = {size}）",
    ),
    ("an input", "输入"),
    ("an integer {raw}", "整数 {raw}"),
    ("and re-ran the forward pass untraced", "然后不记录地重新运行前向传播"),
    ("answer: {answer}", "答案：{answer}"),
    ("any key closes", "按任意键关闭"),
    (
        "arrows move the selected cell (s or Esc to step again)",
        "方向键移动选中的单元格（按 s 或 Esc 恢复单步）",
    ),
    ("arrows step through events", "方向键逐个事件单步"),
    ("as they were before the rotation", "即旋转之前 q 和 k 的梯度"),
    (
        "att = acc / l   lse = m + ln l   (written once per query tile)",
        "att = acc / l   lse = m + ln l   （每个查询 tile 只写一次）",
    ),
    (
        "att differs between the runs by up to {diff}",
        "两次运行的 att 最多相差 {diff}",
    ),
    (
        "att[b={b},i={i},h={h},:] = acc / l, l = {l}",
        "att[b={b},i={i},h={h},:] = acc / l，l = {l}",
    ),
    ("attention map", "注意力图"),
    ("attn", "注意力"),
    (
        "attn-trace: enlarge the terminal (q quits)",
        "attn-trace：请把终端放大（q 退出）",
    ),
    (
        "b0 h0: mistaken S[{i},{j}] = {wij}, S[{j},{i}] = {wji} · correct S[{i},{j}] = {gij}, S[{j},{i}] = {gji}",
        "b0 h0：带错误 S[{i},{j}] = {wij}，S[{j},{i}] = {wji} · 正确 S[{i},{j}] = {gij}，S[{j},{i}] = {gji}",
    ),
    ("back", "返回"),
    ("back to the gallery (or the menu)", "回到示例集（或菜单）"),
    ("back to the menu", "回到菜单"),
    (
        "back to the menu (training goes on; Train TinyGPT returns here)",
        "回到菜单（训练继续进行；再选“训练 TinyGPT”回到这里）",
    ),
    ("back to the menu; from the menu, quit", "回到菜单；在菜单里则退出"),
    ("back to the prompt", "回到提示词界面"),
    ("backward", "反向"),
    ("backward of the input projection", "输入投影的反向传播"),
    ("backward of the key projection", "键投影的反向传播"),
    ("backward of the output projection", "输出投影的反向传播"),
    ("backward of the query projection", "查询投影的反向传播"),
    ("backward of the value projection", "值投影的反向传播"),
    (
        "backward recomputes it: s_tile[{off}] = {p} (#{n})",
        "反向重新计算它：s_tile[{off}] = {p}（#{n}）",
    ),
    ("baseline kernel", "baseline 内核"),
    (
        "baseline row i={i}: data[{first}..={last}] ({base} = {formula} = {numbers})",
        "baseline 第 i={i} 行：data[{first}..={last}]（{base} = {formula} = {numbers}）",
    ),
    (
        "baseline {buf}[{b},{i},{j}] at data[{off}]: off = {formula} = {numbers}",
        "baseline {buf}[{b},{i},{j}] 位于 data[{off}]：off = {formula} = {numbers}",
    ),
    (
        "baseline ↔ MHA, when the scenario runs both",
        "baseline ↔ MHA（场景两者都运行时）",
    ),
    ("batch", "batch"),
    (
        "batch · seq = {n} is over {max} tokens per step",
        "batch · seq = {n} 超过了每步 {max} 个 token",
    ),
    (
        "belongs to qkv = \"fused\"; with qkv = \"separate\" give w_q, b_q, w_k, b_k, w_v, b_v",
        "属于 qkv = \"fused\"；qkv = \"separate\" 时请给出 w_q、b_q、w_k、b_k、w_v、b_v",
    ),
    (
        "belongs to qkv = \"separate\"; this scenario uses the fused w_qkv (set [run].qkv = \"separate\")",
        "属于 qkv = \"separate\"；这个场景使用融合的 w_qkv（请设置 [run].qkv = \"separate\"）",
    ),
    ("both runs one step forward / back", "两次运行一起前进 / 后退一步"),
    (
        "both runs to the first event where they diverge",
        "两次运行都跳到它们第一次不同的事件",
    ),
    ("breakpoint on {buf}[{off}] removed", "已取消 {buf}[{off}] 上的断点"),
    (
        "breakpoint on {buf}[{off}]: c / C continue to its accesses",
        "已在 {buf}[{off}] 上设置断点：c / C 继续执行到它的访问",
    ),
    ("cannot read: {e}", "无法读取：{e}"),
    ("cannot write to standard output: {e}", "无法写入标准输出：{e}"),
    ("cannot write {path}: {e}", "无法写入 {path}：{e}"),
    ("causal mask", "因果掩码"),
    ("checkpoint", "检查点"),
    ("checkpoint {path}: {msg}", "检查点 {path}：{msg}"),
    ("clear the typed path, else go back", "清空输入的路径，否则返回"),
    (
        "close a popup, clear the selection, or go back",
        "关闭弹窗、取消选中，或者返回",
    ),
    ("close it", "关闭浮层"),
    (
        "code ↔ memory in each half (small screens)",
        "每一半在代码和内存之间切换（小屏幕）",
    ),
    (
        "coloured: dS of this tile's pairs, as ds_tile holds them · ·: another tile · –: skipped, the mask hides the whole tile",
        "着色：本分块各对的 dS，即 ds_tile 中的值 · ·：其他分块 · –：跳过，掩码遮住整个分块",
    ),
    (
        "coloured: e^(S − m) of this tile's pairs, as s_tile holds them · ·: another tile · –: skipped, the mask hides the whole tile",
        "着色：本分块各对的 e^(S − m)，即 s_tile 中的值 · ·：其他分块 · –：跳过，掩码遮住整个分块",
    ),
    ("column ", "列 "),
    (
        "continue to the next / previous breakpoint hit",
        "继续执行到下一个 / 上一个断点命中",
    ),
    ("copy: {op} {buf}[{off}] = {value}", "复制：{op} {buf}[{off}] = {value}"),
    ("correct", "正确"),
    ("{lead}: {what}", "{lead}：{what}"),
    (
        "correct: the {n} reads of iteration {name}",
        "正确：迭代 {name} 的 {n} 次读取",
    ),
    (
        "correct: {mixed} of {C} output channels mix several heads · mistaken: none, channel c comes only from head c/D (D = {D})",
        "正确：{C} 个输出通道中有 {mixed} 个混合了多个头 · 带错误：没有，通道 c 只来自头 c/D（D = {D}）",
    ),
    ("correct: {working}", "正确：{working}"),
    (
        "corrupted: the checksum of the metadata and tensors is {have}, the metadata says {want}",
        "已损坏：元数据和张量的校验和是 {have}，元数据写的是 {want}",
    ),
    (
        "corrupted: the checksum of the tensor data is {have}, the metadata says {want}",
        "已损坏：张量数据的校验和是 {have}，元数据写的是 {want}",
    ),
    ("corrupted: {e}", "已损坏：{e}"),
    (
        "cross-attention projects x and memory with their own weights: set [run].qkv = \"separate\" (or give q, k and v)",
        "交叉注意力用各自的权重投影 x 和 memory：请设置 [run].qkv = \"separate\"（或者直接给出 q、k 和 v）",
    ),
    (
        "cross-attention: q = x and k = v = memory, straight from the inputs",
        "交叉注意力：q = x，k = v = memory，直接来自输入",
    ),
    (
        "cross-attention: queries from x, keys and values from memory (separate projections, output projection)",
        "交叉注意力：查询来自 x，键和值来自 memory（各自的投影，输出投影）",
    ),
    (
        "dK starts at 0; every query head h of group g adds its share",
        "dK 从 0 开始；组 g 中的每个查询头 h 各自加上自己的那一份",
    ),
    (
        "dK, dV ← dK_tile, dV_tile   (once per key tile)",
        "dK、dV ← dK_tile、dV_tile   （每个键 tile 一次）",
    ),
    ("dP = dAtt·Vᵀ and dV = Pᵀ·dAtt", "dP = dAtt·Vᵀ 和 dV = Pᵀ·dAtt"),
    (
        "dP = Σ_d dO_tile[{ii},d]·v_tile[{jj},d] = {dp}",
        "dP = Σ_d dO_tile[{ii},d]·v_tile[{jj},d] = {dp}",
    ),
    (
        "dP is computed for masked pairs too; softmax backward multiplies it by P = 0",
        "被掩码的位置对也计算 dP；softmax 的反向传播把它乘以 P = 0",
    ),
    (
        "dP[i,j] = Σ over channels of d_att[i] · v[j]: how the loss changes with this probability",
        "dP[i,j] = 对各通道求和的 d_att[i] · v[j]：损失随这个概率如何变化",
    ),
    (
        "dQ += dS_tile·K_tile / √D   (added in global memory)",
        "dQ += dS_tile·K_tile / √D   （直接加到全局内存里）",
    ),
    ("dQ = dS·K/√d and dK = dSᵀ·Q/√d", "dQ = dS·K/√d 和 dK = dSᵀ·Q/√d"),
    (
        "dQ[i] = Σ_j dS[i,j] K[j] / √C   dK[j] = Σ_i dS[i,j] Q[i] / √C   (visible pairs only)",
        "dQ[i] = Σ_j dS[i,j] K[j] / √C   dK[j] = Σ_i dS[i,j] Q[i] / √C   （只对可见的位置对）",
    ),
    (
        "dQ_h[i] = Σ_j dS_h[i,j] K_g[j] / √D   dK_g[j] += Σ_i dS_h[i,j] Q_h[i] / √D   (visible pairs only)",
        "dQ_h[i] = Σ_j dS_h[i,j] K_g[j] / √D   dK_g[j] += Σ_i dS_h[i,j] Q_h[i] / √D   （只对可见的位置对）",
    ),
    (
        "dQ_h[i] = Σ_j dS_h[i,j] K_h[j] / √D   dK_h[j] = Σ_i dS_h[i,j] Q_h[i] / √D   (visible pairs only)",
        "dQ_h[i] = Σ_j dS_h[i,j] K_h[j] / √D   dK_h[j] = Σ_i dS_h[i,j] Q_h[i] / √D   （只对可见的位置对）",
    ),
    (
        "dS = P·(dP − D_i) = {p} × ({dp} − {d}) = {ds} (#{n}); dQ += dS·K/√D goes straight to global memory",
        "dS = P·(dP − D_i) = {p} × ({dp} − {d}) = {ds}（#{n}）；dQ += dS·K/√D 直接加到全局内存",
    ),
    (
        "dS = {p} × ({dp} − {d_i}) = {ds} (ds_tile[{off}], event #{n}); dQ += dS·K/√D in global memory, dK_tile += dSᵀ·Q/√D on chip",
        "dS = {p} × ({dp} − {d_i}) = {ds}（ds_tile[{off}]，事件 #{n}）；dQ += dS·K/√D 在全局内存中，dK_tile += dSᵀ·Q/√D 在片上",
    ),
    (
        "dS[i,j]: stored by MHA, recomputed on chip by flash",
        "dS[i,j]：MHA 保存它，flash 在片上重新计算",
    ),
    (
        "dV starts at 0; every query head h of group g adds its share",
        "dV 从 0 开始；组 g 中的每个查询头 h 各自加上自己的那一份",
    ),
    ("d_model", "d_model"),
    (
        "d_qkv[i] = concat(dq[i], dk[i], dv[i])   (C + 2·H_kv·D channels)",
        "d_qkv[i] = concat(dq[i], dk[i], dv[i])   （C + 2·H_kv·D 个通道）",
    ),
    ("data", "数据"),
    ("dataset", "数据集"),
    (
        "decode attends over the positions 0..=t it has generated, which is the causal mask: remove [run].mask",
        "解码关注它已经生成的位置 0..=t，这就是因果掩码：请删除 [run].mask",
    ),
    (
        "decode generates one sequence from its own keys and values: remove [shape].S (cross-attention)",
        "解码从一个序列自己的键和值生成它：请删除 [shape].S（交叉注意力）",
    ),
    (
        "decode generates token by token, forward only: remove \"backward\" from [run].passes",
        "解码逐个 token 生成，只有前向：请从 [run].passes 中删除 \"backward\"",
    ),
    (
        "decode is inference, where dropout does not act: remove [run].dropout or set mode = \"eval\"",
        "解码是推理，dropout 不起作用：请删除 [run].dropout，或者设置 mode = \"eval\"",
    ),
    (
        "decode projects each token with the fused w_qkv: start from x (no q, k, v values) with qkv = \"fused\"",
        "解码用融合的 w_qkv 投影每个 token：请从 x 开始（不给出 q、k、v 的值），并设置 qkv = \"fused\"",
    ),
    (
        "decode runs the correct kernels only: remove [run].mistakes",
        "解码只运行正确的内核：请删除 [run].mistakes",
    ),
    (
        "decode step t: att[t] = Σ_j P[t,j]·v_cache[j]",
        "解码第 t 步：att[t] = Σ_j P[t,j]·v_cache[j]",
    ),
    (
        "decode step t: out[t] = att[t]·W_proj + b_proj",
        "解码第 t 步：out[t] = att[t]·W_proj + b_proj",
    ),
    (
        "decode step t: project token t into q and the k/v cache",
        "解码第 t 步：把 token t 投影到 q 和 k/v 缓存",
    ),
    (
        "decode step t: q[t] against the cached keys it sees",
        "解码第 t 步：q[t] 与它能看到的缓存键相乘",
    ),
    (
        "decode step t: softmax over the cached positions it sees",
        "解码第 t 步：对它能看到的缓存位置做 softmax",
    ),
    (
        "decoded token by token from the KV cache",
        "借助 KV 缓存逐个 token 解码",
    ),
    (
        "delete the last character of the typed path",
        "删除输入路径的最后一个字符",
    ),
    (
        "dist = \"{dist_name}\" takes no {key}; std goes with \"normal\", scale with \"uniform\" and \"arange\"",
        "dist = \"{dist_name}\" 不接受 {key}；std 配合 \"normal\"，scale 配合 \"uniform\" 和 \"arange\"",
    ),
    ("diverge #{n}", "分歧 #{n}"),
    (
        "diverge at #{n}: correct {correct} · mistaken {mistaken}",
        "在 #{n} 处分歧：正确 {correct} · 带错误 {mistaken}",
    ),
    ("done", "完成"),
    ("dot product →", "点积 →"),
    (
        "downstream, d_qkv, d_x and d_w_qkv are wrong too: d_w_qkv differs by up to {diff}",
        "下游的 d_qkv、d_x 和 d_w_qkv 也跟着错了：d_w_qkv 最多相差 {diff}",
    ),
    ("dropout P' = P ⊙ keep / (1 − p)", "dropout P' = P ⊙ keep / (1 − p)"),
    (
        "dropout backward dP = dP' ⊙ keep / (1 − p)",
        "dropout 的反向传播 dP = dP' ⊙ keep / (1 − p)",
    ),
    (
        "dropout is off in this scenario (eval mode, or no [run].dropout): both runs compute the same",
        "这个场景关闭了 dropout（eval 模式，或者没有 [run].dropout）：两次运行算出的结果相同",
    ),
    (
        "dropout p = {p} (seed {seed}), {mode} mode",
        "dropout p = {p}（种子 {seed}），{mode} 模式",
    ),
    ("dropped weights: {list}", "被丢弃的权重：{list}"),
    (
        "duplicate key: each key may be given only once",
        "键重复：每个键只能给出一次",
    ),
    (
        "each head's output stays in its own channels: the heads are concatenated but never mixed",
        "每个头的输出停留在自己的通道里：各个头被拼接起来，但从不混合",
    ),
    (
        "each head's whole S×T matrix sums to 1 instead, b0: {whole}",
        "改为每个头的整个 S×T 矩阵的和为 1，b0：{whole}",
    ),
    (
        "each head's whole matrix sums to 1 but its rows do not, so a query's weights are not a distribution",
        "每个头的整个矩阵之和为 1，但各行不是，所以一个查询的权重不构成概率分布",
    ),
    (
        "empty file: a scenario needs at least a title = \"…\" and a [shape] table with B, T and C",
        "空文件：场景至少需要 title = \"…\" 和一个含 B、T、C 的 [shape] 表",
    ),
    (
        "empty: a built-in name (←/→) or a file path",
        "为空：请给出内置数据集的名字（←/→）或文件路径",
    ),
    (
        "empty: a file name such as tinygpt.safetensors",
        "为空：请给出文件名，例如 tinygpt.safetensors",
    ),
    ("empty: give a whole number", "为空：请给出整数"),
    (
        "entries 1-3 on the built-in walkthrough again (after opening a scenario)",
        "第 1 到 3 项重新使用内置的 walkthrough（打开过场景之后）",
    ),
    ("entry {n} has no mistaken run", "第 {n} 项没有带错误的运行"),
    ("error", "错误"),
    ("event #{n}, {file}:{line}", "事件 #{n}，{file}:{line}"),
    (
        "event {n} is past the end: the log has {len} events (0..{last})",
        "事件 {n} 超出了末尾：日志共有 {len} 个事件（0..{last}）",
    ),
    (
        "event {n}: the final write of probs[{off}] (layer {layer}, head {h}, i={i}, j={j})",
        "事件 {n}：对 probs[{off}] 的最后一次写入（层 {layer}，头 {h}，i={i}，j={j}）",
    ),
    ("event {r} reads {buf}[{off}] next", "事件 {r} 接下来读取 {buf}[{off}]"),
    (
        "event {w} last wrote {buf}[{off}]",
        "事件 {w} 最后一次写入 {buf}[{off}]",
    ),
    (
        "exact answers: {correct} of the first {of} validation lines",
        "完全正确的答案：前 {of} 行验证数据中有 {correct} 行",
    ),
    ("exp(score − max)", "exp(分数 − max)"),
    ("expected 0 or 1, found {found}", "应为 0 或 1，实际是 {found}"),
    ("expected a finite number, found {found}", "应为有限数，实际是 {found}"),
    (
        "expected a finite number, found {found} (beyond the f32 range ±3.4e38)",
        "应为有限数，实际是 {found}（超出 f32 的范围 ±3.4e38）",
    ),
    (
        "expected a head size from 1 to 1024, found {d}",
        "应为 1 到 1024 之间的头大小，实际是 {d}",
    ),
    (
        "expected a head size from 1 to 256, found {d}",
        "应为 1 到 256 之间的头大小，实际是 {d}",
    ),
    ("expected a non-empty string", "应为非空字符串"),
    (
        "expected one of 64, 128, 256, 512, 1024, found {t}",
        "应为 64、128、256、512、1024 之一，实际是 {t}",
    ),
    ("expected a non-negative number, found {p}", "应为非负数，实际是 {p}"),
    (
        "expected a number above 1 (θ_m = base^(−2m/D) must shrink with m), found {base}",
        "应为大于 1 的数（θ_m = base^(−2m/D) 必须随 m 变小），实际是 {base}",
    ),
    ("expected a number, found {found}", "应为数字，实际是 {found}"),
    (
        "expected a positive integer up to {max}, found {n}",
        "应为不超过 {max} 的正整数，实际是 {n}",
    ),
    (
        "expected a probability in [0, 1), found {p}",
        "应为 [0, 1) 中的概率，实际是 {p}",
    ),
    (
        "expected a row of {t} entries, found {found}",
        "应为含 {t} 个元素的一行，实际是 {found}",
    ),
    ("expected a string, found {found}", "应为字符串，实际是 {found}"),
    ("expected a table, found {found}", "应为表，实际是 {found}"),
    (
        "expected an array of {expected} numbers (shape [{dims_text}]), found {found}",
        "应为含 {expected} 个数的数组（形状 [{dims_text}]），实际是 {found}",
    ),
    (
        "expected an array of {what}s such as [{example}], found {found}",
        "应为由{what}组成的数组，例如 [{example}]，实际是 {found}",
    ),
    (
        "expected at least one {what} among {example}, found an empty array",
        "应在 {example} 中至少给出一个{what}，实际是空数组",
    ),
    ("expected none or causal", "应为 none 或 causal"),
    ("expected one of {valid}", "应为以下之一：{valid}"),
    (
        "expected shape [{dims_text}] ({expected} numbers, flat or nested), found {found}",
        "应为形状 [{dims_text}]（{expected} 个数，扁平或嵌套），实际是 {found}",
    ),
    (
        "expected true or false, found {found}",
        "应为 true 或 false，实际是 {found}",
    ),
    ("expected {expected}", "应为{expected}"),
    ("expected {expected}, found {n} rows", "应为{expected}，实际有 {n} 行"),
    ("expected {what}, found {found}", "应为{what}，实际是 {found}"),
    ("explicit mask", "显式掩码"),
    ("export failed: {e}", "导出失败：{e}"),
    (
        "export this layer on this prompt as a scenario TOML",
        "把这一层在这个提示词上的计算导出为场景 TOML",
    ),
    (
        "exported layer {layer} to {path} (attn-trace tui reopens it)",
        "已把层 {layer} 导出到 {path}（用 attn-trace tui 重新打开）",
    ),
    ("failed", "失败"),
    ("finished in {time}", "用时 {time} 完成"),
    (
        "finite difference ∂L/∂{primal}[{off}] = {numeric} in an MHA forward pass of the same inputs: flash skips the pair's tile and writes no dS to compare it with",
        "有限差分 ∂L/∂{primal}[{off}] = {numeric}（在同一输入的 MHA 前向传播中）：flash 跳过了这一对所在的分块，没有写出可与之比较的 dS",
    ),
    (
        "finite difference ∂L/∂{primal}[{off}] = {numeric} · backward {grad}[{off}] = {analytic} · relative error {rel}, {verdict}",
        "有限差分 ∂L/∂{primal}[{off}] = {numeric} · 反向传播 {grad}[{off}] = {analytic} · 相对误差 {rel}, {verdict}",
    ),
    (
        "finite difference ∂L/∂{primal}[{off}] = {numeric} · flash dS = ds_tile[{tile}] = {analytic} (event #{n}) · relative error {rel}, {verdict}",
        "有限差分 ∂L/∂{primal}[{off}] = {numeric} · flash 的 dS = ds_tile[{tile}] = {analytic}（事件 #{n}）· 相对误差 {rel}, {verdict}",
    ),
    ("first / last entry", "第一项 / 最后一项"),
    (
        "first / last event   (PgDn/PgUp: ±100)",
        "第一个 / 最后一个事件   （PgDn/PgUp：±100）",
    ),
    ("first / last mistake", "第一个 / 最后一个错误"),
    (
        "first / last step   (PgDn/PgUp: ±100)",
        "第一步 / 最后一步   （PgDn/PgUp：±100）",
    ),
    ("first event of the log", "日志的第一个事件"),
    ("first step of both runs", "两次运行的第一步"),
    ("fix the fields marked ✗ first", "请先修正标 ✗ 的字段"),
    (
        "flash backward: D = rowsum(dAtt ⊙ att), dQ = 0",
        "flash 反向：D = rowsum(dAtt ⊙ att)，dQ = 0",
    ),
    (
        "flash backward: recompute P from lse; dV, dS, dQ, dK per tile",
        "flash 反向：由 lse 重新计算 P；逐块计算 dV、dS、dQ、dK",
    ),
    (
        "flash computes whole sequences tile by tile and has no decoding loop: remove decode or \"flash\" from [run].variants",
        "flash 逐个 tile 地计算整个序列，没有逐个 token 的解码循环：请删掉 decode，或者从 [run].variants 中删掉 \"flash\"",
    ),
    (
        "flash needs as many key/value heads as heads (H_kv = {kv}, H = {h}): it runs on the MHA layout",
        "flash 要求键/值头数等于头数（H_kv = {kv}，H = {h}）：它按 MHA 的布局运行",
    ),
    (
        "flash never stores S: it is perturbed in scores[{off}] of an MHA forward pass of the same inputs, which computes the same L; the gradient is flash's dS from the log",
        "flash 从不保存 S：改为在同一输入的 MHA 前向传播中扰动 scores[{off}]，它算出的是同一个 L；梯度取自日志中 flash 的 dS",
    ),
    (
        "flash's {name} = {a}, mha's = {b}: {verdict}",
        "flash 的 {name} = {a}，mha 的 = {b}：{verdict}",
    ),
    (
        "flash: per tile S = Q·Kᵀ/√d, online softmax, att = acc/l",
        "flash：逐块计算 S = Q·Kᵀ/√d，在线 softmax，att = acc/l",
    ),
    (
        "flash: the pair is {buf}[ii*bc + jj] = {buf}[{ii}*{bc} + {jj}] = {buf}[{off}] while query tile i0={i0} and key tile j0={j0} ({br}×{bc}) are loaded",
        "flash：当查询分块 i0={i0} 与键分块 j0={j0}（{br}×{bc}）都已载入时，这一对位于 {buf}[ii*bc + jj] = {buf}[{ii}*{bc} + {jj}] = {buf}[{off}]",
    ),
    ("forward", "前向"),
    ("forward and backward", "前向和反向"),
    ("forward only", "只有前向"),
    ("forward ↔ backward", "前向 ↔ 反向"),
    (
        "g'[d0] = g[d0]·cos + g[d1]·sin, g'[d1] = −g[d0]·sin + g[d1]·cos, the gradients of q and k",
        "g'[d0] = g[d0]·cos + g[d1]·sin，g'[d1] = −g[d0]·sin + g[d1]·cos，得到",
    ),
    ("gather dq, dk, dv into d_qkv", "把 dq、dk、dv 汇集到 d_qkv"),
    (
        "generation runs step by step: step t projects token t once and writes its key and value into row t of k_cache and v_cache",
        "生成一步一步进行：第 t 步把 token t 投影一次，并把它的键和值写入 k_cache 和 v_cache 的第 t 行",
    ),
    ("global memory, {pass}: {m} · {fl}", "全局内存，{pass}：{m} · {fl}"),
    (
        "goto: 123 · b=0 h=1 i=2 j=1 · scores[16] · softmax",
        "跳转：123 · b=0 h=1 i=2 j=1 · scores[16] · softmax",
    ),
    ("has ended ({n} events)", "已经结束（{n} 个事件）"),
    ("heads", "头数"),
    ("heads {list} (Tab)", "头 {list}（Tab）"),
    ("heat {low} ", "热度 {low} "),
    ("highlight the previous / next entry", "高亮上一项 / 下一项"),
    ("highlight the previous / next line", "高亮上一行 / 下一行"),
    (
        "i and j are required, e.g. b=0,h=1,i=2,j=1",
        "必须给出 i 和 j，例如 b=0,h=1,i=2,j=1",
    ),
    ("initial weights and data order", "初始权重和数据顺序"),
    (
        "input projection qkv = x·W_qkv + b_qkv",
        "输入投影 qkv = x·W_qkv + b_qkv",
    ),
    (
        "into d_k of key j={j} (dK = dSᵀ·Q/√{w}):",
        "流入键 j={j} 的 d_k（dK = dSᵀ·Q/√{w}）：",
    ),
    (
        "into d_q of query i={i} (dQ = dS·K/√{w}):",
        "流入查询 i={i} 的 d_q（dQ = dS·K/√{w}）：",
    ),
    ("invalid arguments", "参数无效"),
    ("invalid value", "取值无效"),
    ("is a FIFO (named pipe)", "是一个 FIFO（命名管道）"),
    ("is a block device", "是一个块设备"),
    ("is a character device", "是一个字符设备"),
    ("is a directory", "是一个目录"),
    ("is a directory: give a file name", "是一个目录：请给出文件名"),
    ("is a directory: give a file of text", "是一个目录：请给出文本文件"),
    (
        "is a directory; expected a scenario file such as scenarios/mha_walkthrough.toml",
        "是一个目录；应为场景文件，例如 scenarios/mha_walkthrough.toml",
    ),
    ("is a socket", "是一个套接字"),
    ("is negative; expected a whole number ≥ 0", "是负数；应为 ≥ 0 的整数"),
    ("is not a file", "不是文件"),
    ("is not a whole number ≥ 0", "不是 ≥ 0 的整数"),
    ("is too large", "太大"),
    (
        "is too large for memory: batch {b} of seq {seq} with d_model {c} and {l} layers needs about {gib} GiB; the limit is {max} GiB",
        "内存放不下：batch {b}、seq {seq}、d_model {c}、{l} 层约需 {gib} GiB；上限是 {max} GiB",
    ),
    ("it projects x with learned weights instead", "它改为用学到的权重投影 x"),
    ("iteration {name}", "迭代 {name}"),
    (
        "iteration {name} reads {cells}: type {offsets}",
        "迭代 {name} 读取 {cells}：输入 {offsets}",
    ),
    (
        "its values first differ at event #{event}: {mistaken} (correct run: {correct})",
        "数值首次不同于事件 #{event}：{mistaken}（正确运行：{correct}）",
    ),
    (
        "j={j} > i={i}: key {j} comes after query {i}, so the causal mask hides it;",
        "j={j} > i={i}：键 {j} 在查询 {i} 之后，所以因果掩码遮住了它；",
    ),
    (
        "j={j} ≤ i={i}: key {j} is not in the future of query {i}, so the score is kept",
        "j={j} ≤ i={i}：键 {j} 不在查询 {i} 的未来，所以分数保留",
    ),
    (
        "k and v: mha 2 × {km} values, gqa 2 × {kg} (H_kv/H = {H_kv}/{H}): {pct}% of MHA's, what a KV cache keeps per layer",
        "k 和 v：mha 2 × {km} 个值，gqa 2 × {kg} 个（H_kv/H = {H_kv}/{H}）：是 MHA 的 {pct}%，也就是 KV 缓存每层保存的量",
    ),
    (
        "k[j] = m[j]·W_k + b_k   (m = memory in cross-attention, else x)",
        "k[j] = m[j]·W_k + b_k   （交叉注意力中 m = memory，否则 m = x）",
    ),
    ("key", "键"),
    ("key j − 1 / + 1", "键 j − 1 / + 1"),
    ("key j=", "键 j="),
    (
        "key j={j} in {name}: k[{first}..={last}], k_base = {formula} = {numbers}",
        "键 j={j} 在 {name} 中：k[{first}..={last}]，k_base = {formula} = {numbers}",
    ),
    ("key projection k = m·W_k + b_k", "键投影 k = m·W_k + b_k"),
    (
        "key tile j0={k0}: m = max({m_old}, rowmax) = {m_new}; l = e^({m_old} − {m_new_p})·{l_old} + rowsum = {l_new}",
        "键分块 j0={k0}：m = max({m_old}, rowmax) = {m_new}；l = e^({m_old} − {m_new_p})·{l_old} + rowsum = {l_new}",
    ),
    ("kv heads", "键/值头数"),
    ("last event of the log", "日志的最后一个事件"),
    ("last step of both runs", "两次运行的最后一步"),
    (
        "layer {layer} does not exist: the model has {n} (0..={last})",
        "第 {layer} 层不存在：模型有 {n} 层（0..={last}）",
    ),
    ("layer {layer} has no parameters", "第 {layer} 层没有参数"),
    ("layers", "层数"),
    ("layers {list} (]/[)", "层 {list}（]/[）"),
    ("level {level}: predict {what}", "级别 {level}：预测{what}"),
    (
        "lines `31415|11345`: write the digits before `|` in ascending order",
        "每行 `31415|11345`：把 `|` 前的数字按升序写出",
    ),
    (
        "lines `abcde|abcde`: repeat the letters before `|`",
        "每行 `abcde|abcde`：重复 `|` 前的字母",
    ),
    (
        "lines `abcde|edcba`: write the letters before `|` backwards",
        "每行 `abcde|edcba`：把 `|` 前的字母倒过来写",
    ),
    ("loss", "损失"),
    ("loss chart: log ↔ linear scale", "损失图：对数 ↔ 线性刻度"),
    (
        "loss {loss}  val {val}  {speed} tok/s",
        "损失 {loss}  验证 {val}  {speed} token/秒",
    ),
    (
        "loss {loss} nats/byte (perplexity {perplexity}) over {tokens} tokens: {windows} windows of {seq} from {what}",
        "损失 {loss} nats/字节（困惑度 {perplexity}），共 {tokens} 个 token：从 {what} 取 {windows} 个长度为 {seq} 的窗口",
    ),
    ("lr", "lr"),
    (
        "lse.data[{off}] = m + ln l = {m} + ln {l} = {lse} (event #{n})",
        "lse.data[{off}] = m + ln l = {m} + ln {l} = {lse}（事件 #{n}）",
    ),
    (
        "m = max(m_old, rowmax(S_tile)) = max({old}, …) = {m} (#{n})",
        "m = max(m_old, rowmax(S_tile)) = max({old}, …) = {m}（#{n}）",
    ),
    ("mask", "掩码"),
    (
        "mask: none needed: step {i} reads the cached keys 0..={i} only, key {j} among them",
        "掩码：不需要：第 {i} 步只读取缓存中的键 0..={i}，键 {j} 就在其中",
    ),
    ("mask: {reason}", "掩码：{reason}"),
    ("masked ({why}): S = -1e9", "被掩码（{why}）：S = -1e9"),
    (
        "masked ({why}): {target} = −1e9, the dot product {sum} is discarded",
        "被掩码（{why}）：{target} = −1e9，点积 {sum} 被丢弃",
    ),
    (
        "masked scores become 0 instead of −∞, so future positions still get probability",
        "被掩码的分数变成 0 而不是 −∞，所以未来的位置仍然得到概率",
    ),
    (
        "max = {max}   (read first, so exp never overflows)",
        "max = {max}   （先读出它，这样 exp 不会溢出）",
    ),
    ("max probability per row, b0 h0:", "每行的最大概率，b0 h0："),
    (
        "mean max probability over all {rows} rows: correct {good}, mistaken {bad}: the softmax is {verdict}",
        "全部 {rows} 行的平均最大概率：正确 {good}，带错误 {bad}：softmax {verdict}",
    ),
    (
        "measured on the two runs' scores: mistaken / correct = {mean} (over {n} scores)",
        "在两次运行的分数上测得：带错误 / 正确 = {mean}（共 {n} 个分数）",
    ),
    (
        "memory is the key/value input of cross-attention: give [shape].S, the number of queries",
        "memory 是交叉注意力中键和值的输入：请给出 [shape].S，即查询的个数",
    ),
    ("menu", "菜单"),
    ("metadata 'adamw_t' is too large", "元数据 'adamw_t' 太大"),
    (
        "metadata 'adamw_t' is {t}, more updates than the {step} steps taken",
        "元数据 'adamw_t' 是 {t}，比已走的 {step} 步更新次数还多",
    ),
    ("metadata 'data_seed' is too large", "元数据 'data_seed' 太大"),
    (
        "metadata 'eps' must be a positive number, got {eps}",
        "元数据 'eps' 必须是正数，实际是 {eps}",
    ),
    (
        "metadata 'format' is '{f}', expected '{format}'",
        "元数据 'format' 是 '{f}'，应为 '{format}'",
    ),
    (
        "metadata 'lr' must be a positive number, got {lr}",
        "元数据 'lr' 必须是正数，实际是 {lr}",
    ),
    (
        "metadata 'rope' is '{name}', expected none, interleaved or half",
        "元数据 'rope' 是 '{name}'，应为 none、interleaved 或 half",
    ),
    ("metadata 'step' is not a whole number", "元数据 'step' 不是整数"),
    (
        "metadata 'weight_decay' must be a number ≥ 0, got {wd}",
        "元数据 'weight_decay' 必须是 ≥ 0 的数，实际是 {wd}",
    ),
    (
        "metadata '{key}' is '{v}', expected a number",
        "元数据 '{key}' 是 '{v}'，应为数",
    ),
    (
        "metadata '{key}' is '{v}', expected a whole number",
        "元数据 '{key}' 是 '{v}'，应为整数",
    ),
    (
        "metadata '{key}' must be in [0, 1), got {v}",
        "元数据 '{key}' 必须在 [0, 1) 内，实际是 {v}",
    ),
    (
        "metadata has no 'checksum': every checkpoint attn-trace writes has one, so this file was altered or not written by attn-trace",
        "元数据中没有 'checksum'：attn-trace 写出的每个检查点都有它，所以这个文件被改动过，或不是 attn-trace 写出的",
    ),
    (
        "metadata has no 'format': not a TinyGPT checkpoint written by attn-trace",
        "元数据中没有 'format'：不是 attn-trace 写出的 TinyGPT 检查点",
    ),
    (
        "metadata has no '{key}': not a TinyGPT checkpoint",
        "元数据中没有 '{key}'：不是 TinyGPT 检查点",
    ),
    (
        "metadata has no '{k}', which the optimizer state in the file needs",
        "元数据中没有 '{k}'，而文件中的优化器状态需要它",
    ),
    (
        "metadata key '{k}' is an optimizer setting, but the file holds no adamw.* tensors",
        "元数据键 '{k}' 是优化器设置，但文件中没有 adamw.* 张量",
    ),
    (
        "metadata key '{k}' is not a key of TinyGPT checkpoints",
        "元数据键 '{k}' 不是 TinyGPT 检查点的键",
    ),
    ("metadata: {e}", "元数据：{e}"),
    (
        "mha head {h} of row i={i}: data[{first}..={last}] ({head} = {formula} = {numbers})",
        "mha 头 {h} 的第 i={i} 行：data[{first}..={last}]（{head} = {formula} = {numbers}）",
    ),
    (
        "mha head {h} {buf}[{b},{h},{i},{j}] at data[{off}]: off = {formula} = {numbers}",
        "mha 头 {h} {buf}[{b},{h},{i},{j}] 位于 data[{off}]：off = {formula} = {numbers}",
    ),
    (
        "mha {n} rows, one per head, each summing to 1: {heads}",
        "mha 有 {n} 行，每个头一行，各自的和为 1：{heads}",
    ),
    (
        "mha: stores {name}[{b},{h},{i},{j}] = {x} in {buf}[{off}] (#{n}), off = {formula} = {numbers}",
        "mha：把 {name}[{b},{h},{i},{j}] = {x} 存在 {buf}[{off}]（#{n}），off = {formula} = {numbers}",
    ),
    ("missed most: {top}", "错得最多：{top}"),
    ("missing {arg}", "缺少 {arg}"),
    (
        "missing: [shape] needs B, T and C (and optionally H, default 1)",
        "缺失：[shape] 需要 B、T 和 C（H 可选，默认为 1）",
    ),
    (
        "missing: every scenario needs a [shape] table with B, T and C",
        "缺失：每个场景都需要一个含 B、T、C 的 [shape] 表",
    ),
    (
        "missing: every scenario needs a title = \"…\" at the top",
        "缺失：每个场景都需要在开头写 title = \"…\"",
    ),
    ("mistake", "错误示例"),
    (
        "mistake 1 uses x itself as q, k and v",
        "错误 1 直接把 x 当作 q、k 和 v",
    ),
    ("mistake 4 returns att as the output", "错误 4 把 att 作为输出返回"),
    ("mistake 5 never applies dropout", "错误 5 从不应用 dropout"),
    ("mistake {name}: {symptom}", "错误 {name}：{symptom}"),
    (
        "mistake: q = k = v = x, no input projections",
        "错误：q = k = v = x，没有输入投影",
    ),
    (
        "mistake: q = k = v = x, with no W_q, W_k, W_v to learn what to look for",
        "错误：q = k = v = x，没有 W_q、W_k、W_v 来学习该关注什么",
    ),
    ("mistaken: {names}", "带错误：{names}"),
    ("mistakes gallery", "错误示例集"),
    ("mode", "模式"),
    ("must be 1..={max}, got {n}", "必须在 1..={max} 内，实际是 {n}"),
    ("must be 1..={max}, got {v}", "必须在 1..={max} 之间，实际是 {v}"),
    ("must be in (0, {max}], got {lr}", "必须在 (0, {max}] 之间，实际是 {lr}"),
    (
        "must be naive or flash, got {name}",
        "必须是 naive 或 flash，收到的是 {name}",
    ),
    (
        "must be none, interleaved or half, got {name}",
        "必须是 none、interleaved 或 half，收到的是 {name}",
    ),
    (
        "must be {vocab} (byte tokens), got {n}",
        "必须是 {vocab}（字节 token），实际是 {n}",
    ),
    (
        "must divide d_model: d_model {c} is not a multiple of n_heads {h}",
        "必须整除 d_model：d_model {c} 不是 n_heads {h} 的倍数",
    ),
    (
        "must divide d_model: {c} is not a multiple of {h} (C % H ≠ 0; try {divisors})",
        "必须整除 d_model：{c} 不是 {h} 的倍数（C % H ≠ 0；可以试试 {divisors}）",
    ),
    (
        "must divide n_heads: n_heads {h} is not a multiple of n_kv_heads {kv}",
        "必须整除 n_heads：n_heads {h} 不是 n_kv_heads {kv} 的倍数",
    ),
    (
        "must divide the heads: {h} query heads cannot be shared out among {kv} key/value heads (H % H_kv ≠ 0; try {divisors})",
        "必须整除头数：{h} 个查询头无法平均分给 {kv} 个键/值头（H % H_kv ≠ 0；可试 {divisors}）",
    ),
    (
        "needs a run that starts at x: with q, k and v given there is no input projection to leave out",
        "需要从 x 开始的运行：给出 q、k 和 v 时没有可以省略的输入投影",
    ),
    (
        "needs an output projection to leave out: start at x, or give w_proj and b_proj",
        "需要一个可以省略的输出投影：从 x 开始，或者给出 w_proj 和 b_proj",
    ),
    (
        "needs dropout to forget: set [run].dropout above 0 with mode = \"train\"",
        "需要一个会被忘掉的 dropout：在 mode = \"train\" 下把 [run].dropout 设为大于 0",
    ),
    ("nesting [{dims}]", "嵌套 [{dims}]"),
    ("never diverge", "从不分歧"),
    ("new run (once this one has finished)", "新的训练（本次结束之后）"),
    (
        "next / previous event (reverse stepping)",
        "下一个 / 上一个事件（反向单步）",
    ),
    ("next / previous head", "下一个 / 上一个头"),
    (
        "next / previous iteration of the enclosing loop",
        "外一层循环的下一次 / 上一次迭代",
    ),
    (
        "next / previous iteration of the innermost loop",
        "最内层循环的下一次 / 上一次迭代",
    ),
    (
        "next / previous kernel the scenario traces (same element)",
        "下一个 / 上一个场景追踪的内核（同一个元素）",
    ),
    ("next / previous layer", "下一层 / 上一层"),
    ("next / previous phase", "下一个 / 上一个阶段"),
    ("next batch item", "下一个批次样本"),
    ("next head", "下一个头"),
    (
        "next: the 1 read of iteration {name} ({bufs}): its offset?",
        "下一步：迭代 {name} 的 1 次读（{bufs}）：它的偏移？",
    ),
    (
        "next: the {n} reads of iteration {name} ({bufs}): their offsets in order?",
        "下一步：迭代 {name} 的 {n} 次读（{bufs}）：按顺序给出它们的偏移？",
    ),
    ("next: {what}: its flat offset?", "下一步：{what}：它的扁平偏移？"),
    (
        "next: {what}: its offset and the value it writes?",
        "下一步：{what}：它的偏移和写入的值？",
    ),
    (
        "no *.safetensors files here: train one (menu → Train TinyGPT, s saves) or type a path below",
        "这里没有 *.safetensors 文件：先训练一个（菜单 → 训练 TinyGPT，按 s 保存），或者在下面输入路径",
    ),
    (
        "no *.toml files here: type a path below",
        "这里没有 *.toml 文件：请在下面输入路径",
    ),
    (
        "no access of {buf}[{off}] after this event",
        "这个事件之后没有对 {buf}[{off}] 的访问",
    ),
    (
        "no access of {buf}[{off}] before this event",
        "这个事件之前没有对 {buf}[{off}] 的访问",
    ),
    (
        "no breakpoints: select a cell and press b",
        "没有断点：先选中一个单元格，再按 b",
    ),
    ("no buffer named {name}", "没有名为 {name} 的缓冲区"),
    ("no earlier breakpoint hit", "前面没有断点命中"),
    (
        "no gradient cell here: each write of one (d_q, d_k, d_x, d_w_qkv, …) is checked by finite differences",
        "这里没有梯度单元：每次写入梯度单元（d_q、d_k、d_x、d_w_qkv……）都会用有限差分校验",
    ),
    ("no kernel", "没有内核"),
    (
        "no kernel wrote {buf}, so changing it cannot change the loss",
        "没有内核写入 {buf}，所以改变它不会改变损失",
    ),
    ("no later breakpoint hit", "后面没有断点命中"),
    ("no mask", "无掩码"),
    ("no mask hides it", "没有掩码遮住它"),
    ("no next iteration", "没有下一次迭代"),
    ("no next iteration of the enclosing loop", "外一层循环没有下一次迭代"),
    ("no previous iteration", "没有上一次迭代"),
    (
        "no previous iteration of the enclosing loop",
        "外一层循环没有上一次迭代",
    ),
    (
        "no probability was stored by forward: only lse, one number per row",
        "前向没有保存任何概率：只保存了 lse，每行一个数",
    ),
    ("no room for {names}", "放不下 {names}"),
    (
        "no room for {names} (a taller terminal shows them)",
        "放不下 {names}（终端更高时会显示）",
    ),
    ("no room for {n} more buffers", "还有 {n} 个缓冲区放不下"),
    (
        "no score element b={b} h={h} i={i} j={j} in {variant}: B={nb}, H={nh}, T={nt}",
        "{variant} 中没有分数元素 b={b} h={h} i={i} j={j}：B={nb}，H={nh}，T={nt}",
    ),
    ("no such file", "文件不存在"),
    (
        "no such file, nor a built-in dataset ({names})",
        "没有这个文件，也不是内置数据集（{names}）",
    ),
    ("no thread could be started to compute it", "无法启动计算它的线程"),
    ("no weights to trace yet", "还没有可以追踪的权重"),
    (
        "none: ({i}, {j}) is a masked pair ({reason}). Its score was overwritten by a constant, so it does",
        "没有：({i}, {j}) 是被掩码的位置对（{reason}）。它的分数被一个常数覆盖，所以",
    ),
    (
        "none: every key is visible to every query, so the score is kept",
        "无：每个查询都能看到每个键，所以分数保留",
    ),
    (
        "not UTF-8 text: byte {byte} cannot start a character; save the file as UTF-8",
        "不是 UTF-8 文本：字节 {byte} 不能作为字符的开头；请把文件保存为 UTF-8",
    ),
    (
        "not a TinyGPT checkpoint: its header of {header_len} bytes is larger than any checkpoint's ({max} at most)",
        "不是 TinyGPT 检查点：它的头部有 {header_len} 字节，比任何检查点的都大（最多 {max}）",
    ),
    (
        "not a safetensors checkpoint: {size} bytes is shorter than the 8-byte header length",
        "不是 safetensors 检查点：{size} 字节比 8 字节的头部长度还短",
    ),
    (
        "not a valid safetensors checkpoint (truncated or corrupted?): {e}",
        "不是有效的 safetensors 检查点（被截断或已损坏？）：{e}",
    ),
    (
        "not depend on q or k; the kernel skips the pair and no gradient reaches d_q or d_k through it",
        "不依赖 q 或 k；内核跳过这一对，没有梯度经由它到达 d_q 或 d_k",
    ),
    (
        "not quite: iteration {name} makes {n} reads, you typed {typed} offsets",
        "不太对：迭代 {name} 有 {n} 次读，你输入了 {typed} 个偏移",
    ),
    (
        "not quite: the first {n} are right, but iteration {name} makes only {n} reads",
        "不太对：前 {n} 个是对的，但迭代 {name} 只有 {n} 次读",
    ),
    (
        "not quite: {buf}[{off}] is right, but the value is not {v}: {math}",
        "不太对：{buf}[{off}] 是对的，但值不是 {v}：{math}",
    ),
    ("not saved: {e}", "没有保存：{e}"),
    ("not saved: {msg}", "未保存：{msg}"),
    (
        "not used when q, k and v are given (the run starts at the attention core)",
        "给出 q、k 和 v 时不会用到（运行从注意力核心开始）",
    ),
    (
        "not used when q, k and v are given (the run starts at the attention core, after the input projection)",
        "给出 q、k 和 v 时不会用到（运行从注意力核心开始，在输入投影之后）",
    ),
    ("not valid TOML: {message}", "不是合法的 TOML：{message}"),
    (
        "nothing reads {buf}[{off}] after this event",
        "这个事件之后没有读取 {buf}[{off}] 的事件",
    ),
    ("nothing to save yet", "还没有可以保存的东西"),
    ("nothing wrote probs[{off}]", "没有事件写入 probs[{off}]"),
    (
        "nothing wrote {buf}[{off}] before this event: it holds its initial value {v}",
        "这个事件之前没有写入 {buf}[{off}] 的事件：它保存的是初始值 {v}",
    ),
    ("off", "偏移"),
    (
        "old value {b}[{o}] = {value}: the sum is added to it",
        "旧值 {b}[{o}] = {value}：这个和加到它上面",
    ),
    (
        "on chip, flash: {reads} reads, {writes} writes; its score tile holds {tile} numbers at a time, where mha's {buf} holds {all}",
        "片上，flash：{reads} 次读，{writes} 次写；其分数分块一次只存 {tile} 个数，而 mha 的 {buf} 存 {all} 个",
    ),
    (
        "one head: nothing to mix, but out = att skips the learned W_proj",
        "只有一个头：没有什么可混合的，但 out = att 跳过了学到的 W_proj",
    ),
    ("one step forward / back", "前进 / 后退一步"),
    (
        "online softmax: m_new = max(m_old, rowmax(S_tile))",
        "在线 softmax：m_new = max(m_old, rowmax(S_tile))",
    ),
    (
        "only the \"gqa\" variant reads fewer key/value heads than query heads: add \"gqa\" to [run].variants or remove H_kv",
        "只有 \"gqa\" 变体读取的键/值头少于查询头：请在 [run].variants 中加上 \"gqa\"，或者删除 H_kv",
    ),
    (
        "only the backward pass reads d_out; add \"backward\" to [run].passes or remove d_out",
        "只有反向传播读取 d_out；请在 [run].passes 中加上 \"backward\"，或者删除 d_out",
    ),
    ("only the mistaken module makes it", "只有带错误的模块有这个阶段"),
    ("only {names}", "只有 {names}"),
    ("open entry 1 to 9 directly", "直接打开第 1 到第 9 项"),
    ("open mistake 1 to 7 directly", "直接打开第 1 到第 7 个错误"),
    ("open the entry under the pointer", "打开鼠标所指的项"),
    ("open the highlighted entry", "打开高亮的项"),
    (
        "open the highlighted file, or enter the highlighted folder",
        "打开高亮的文件，或者进入高亮的文件夹",
    ),
    ("open the highlighted mistake side by side", "并排打开高亮的错误"),
    ("open the mistake under the pointer", "打开鼠标所指的错误"),
    (
        "open the tracer (MHA) at the event that writes this element",
        "在 MHA 上打开 tracer，停在写这个元素的事件",
    ),
    (
        "open the tracer at the event that wrote this probability",
        "打开 tracer，停在写出这个概率的事件",
    ),
    (
        "open the tracer on the correct run here",
        "在正确的运行上、停在这里打开 tracer",
    ),
    (
        "open the tracer on this layer from its first event",
        "在这一层上从第一个事件打开 tracer",
    ),
    ("optimizer steps", "优化器步数"),
    (
        "out: identical, bit for bit: MHA here is GQA with the heads of each group tied",
        "out：逐位相同：这里的 MHA 就是每组的头绑在一起的 GQA",
    ),
    ("out: {n} of {total} values differ", "out：{total} 个值中有 {n} 个不同"),
    (
        "output projection out = att·W_proj + b_proj",
        "输出投影 out = att·W_proj + b_proj",
    ),
    (
        "over all {cells} cells of {name}: mistaken − last head's share ≤ {off_last} · correct − sum of the shares ≤ {off_sum}",
        "{name} 的全部 {cells} 个单元：错误值 − 最后一个头的份额 ≤ {off_last} · 正确值 − 各份额之和 ≤ {off_sum}",
    ),
    (
        "pair m={m} (channels {d0}, {d1}) at t={pos}: angle t·θ_m = {pos} × {base}^(−2·{m}/{D}) = {angle}{back}",
        "通道对 m={m}（通道 {d0}、{d1}），位置 t={pos}：角度 t·θ_m = {pos} × {base}^(−2·{m}/{D}) = {angle}{back}",
    ),
    ("params", "参数量"),
    (
        "partial sum {start}Σ ({finished} of {total} terms) = ",
        "部分和 {start}Σ（{total} 项中的 {finished} 项）= ",
    ),
    ("pass", "遍"),
    (
        "pass \"{pass}\" is not among [run].passes",
        "遍 \"{pass}\" 不在 [run].passes 中",
    ),
    (
        "pass a: Σ_k dP·P so far ({upto} of {T}) = ",
        "pass a：目前的 Σ_k dP·P（{T} 项中的 {upto} 项）= ",
    ),
    (
        "pass b: dS = P (dP − Σ) = {p} × ({dp} − {dot}) = ",
        "pass b：dS = P (dP − Σ) = {p} × ({dp} − {dot}) = ",
    ),
    ("pass b: e_{j} = exp({s} − {m}) = ", "pass b：e_{j} = exp({s} − {m}) = "),
    (
        "pass c: P = e_{j} / Σ e = {e} / {sum} = ",
        "pass c：P = e_{j} / Σ e = {e} / {sum} = ",
    ),
    ("pause / resume training", "暂停 / 继续训练"),
    ("paused", "已暂停"),
    ("paused: space resumes", "已暂停：按空格继续"),
    (
        "perturbed {primal}[{off}] ({label}, {role}) by ±{h}, ±{half} and ±{quarter} {when}",
        "把 {primal}[{off}]（{label}，{role}）扰动 ±{h}、±{half} 和 ±{quarter}，{when}",
    ),
    ("phase", "阶段"),
    ("phase {phase} is not in this trace", "这个 trace 里没有阶段 {phase}"),
    ("plus {buf}[{off}] = {value}", "加上 {buf}[{off}] = {value}"),
    (
        "Σ × 1/√{symbol} added to {buf}[{off}] = {value}",
        "Σ × 1/√{symbol} 加到 {buf}[{off}] = {value} 上",
    ),
    (
        "predict {what}: type it, Enter checks, v reveals, n skips, l changes the level, Q stops",
        "预测{what}：输入答案，Enter 检查，v 揭晓，n 跳过，l 换级别，Q 退出",
    ),
    (
        "previous / next access of the selected cell (its ticks)",
        "选中单元格的上一次 / 下一次访问（时间线上的刻度）",
    ),
    ("previous / next mistake", "上一个 / 下一个错误"),
    ("prob", "概率"),
    (
        "probability rows of query i={i}: baseline one row [{row}]",
        "查询 i={i} 的概率行：baseline 一行 [{row}]",
    ),
    ("product", "乘积"),
    (
        "q, k and v are given, so nothing is projected: remove qkv or give x instead",
        "已给出 q、k 和 v，没有需要投影的东西：请删除 qkv，或者改为给出 x",
    ),
    (
        "q, k and v start the run at the attention core and must be given together; missing {missing}",
        "q、k 和 v 让运行从注意力核心开始，必须一起给出；缺少 {missing}",
    ),
    ("qkv", "qkv"),
    (
        "queries, keys and values are all x itself: the scores are symmetric (S[i,j] = S[j,i]) and no weights learn what a token should look for",
        "查询、键和值都是 x 本身：分数是对称的（S[i,j] = S[j,i]），也没有权重去学习一个 token 该关注什么",
    ),
    ("query", "查询"),
    (
        "query head h={h}: mha reads k head {h}; gqa reads kv_h = h/(H/H_kv) = {h}/({H}/{H_kv}) = {kv_h}, shared by heads {first}..={last}",
        "查询头 h={h}：mha 读取 k 的头 {h}；gqa 读取 kv_h = h/(H/H_kv) = {h}/({H}/{H_kv}) = {kv_h}，由头 {first}..={last} 共享",
    ),
    ("query i − 1 / + 1", "查询 i − 1 / + 1"),
    ("query projection q = x·W_q + b_q", "查询投影 q = x·W_q + b_q"),
    (
        "query tile i0={i0} (rows {i0}..={i1}, i = i0 + ii with ii={ii}), key tile j0={j0} (keys {j0}..={j1}, jj={jj}); tiles of br={br} rows by bc={bc} columns; the pair lives in s_tile[ii*bc + jj] = s_tile[{off}] only while both are loaded",
        "查询分块 i0={i0}（第 {i0}..={i1} 行，i = i0 + ii，其中 ii={ii}），键分块 j0={j0}（键 {j0}..={j1}，jj={jj}）；分块为 br={br} 行、bc={bc} 列；只有两个分块都已载入时，这一对才位于 s_tile[ii*bc + jj] = s_tile[{off}]",
    ),
    (
        "query {i} may see no key: softmax of a row of −1e9 is uniform, not zero; give it at least one 1",
        "查询 {i} 看不到任何键：一整行 −1e9 的 softmax 是均匀分布而不是零；请至少给它一个 1",
    ),
    ("quit", "退出"),
    ("quiz off (Q starts it again)", "测验已关闭（按 Q 重新开始）"),
    (
        "quiz: predict the next access (Enter · v reveal · l level)",
        "测验：预测下一次访问（Enter · v 揭晓 · l 级别）",
    ),
    (
        "q·k sums {width} products, one per channel {ch} in 0..{name}:",
        "q·k 是 {width} 个乘积之和，通道 {ch} 取遍 0..{name}，每个通道一个：",
    ),
    (
        "ragged nesting: expected a number here like the other entries at this level, found an array",
        "嵌套不整齐：这里应该和这一层的其他元素一样是一个数，实际是数组",
    ),
    (
        "ragged nesting: expected an array of {n} entries like the first row, found {found}",
        "嵌套不整齐：应该和第一行一样是含 {n} 个元素的数组，实际是 {found}",
    ),
    (
        "ragged nesting: expected {len} entries like the first row at this level, found {found}",
        "嵌套不整齐：这一层应该和第一行一样有 {len} 个元素，实际有 {found} 个",
    ),
    ("read", "读"),
    ("reads", "读"),
    ("resumed", "已继续"),
    (
        "right after its kernel wrote it, then re-ran the rest of the forward pass untraced",
        "在它的内核刚写完它时扰动，然后不记录地重新运行前向传播的其余部分",
    ),
    ("rope", "旋转位置"),
    (
        "rope turns channel pairs, so a head needs an even number of channels; the {v} kernel's head has D = {size} = {d}",
        "rope 旋转的是通道对，所以一个头需要偶数个通道；{v} 内核的头有 D = {size} = {d}",
    ),
    (
        "rope_back then turns every pair of d_q row i and d_k row j back by −t·θ_m (rope.rs):",
        "rope_back 随后把 d_q 第 i 行和 d_k 第 j 行的每一对通道转回 −t·θ_m（rope.rs）：",
    ),
    (
        "rotary positions backward: turn dQ and dK back by −t·θ_m",
        "旋转位置编码的反向传播：把 dQ 和 dK 转回 −t·θ_m",
    ),
    (
        "rotary positions turn q and k by their positions in one sequence, but cross-attention's queries and keys come from two: remove rope or [shape].S",
        "旋转位置编码按 q 和 k 在同一个序列中的位置旋转它们，但交叉注意力的查询和键来自两个序列：请删除 rope 或 [shape].S",
    ),
    (
        "rotary positions: turn each channel pair of q and k by t·θ_m",
        "旋转位置编码：把 q 和 k 的每一对通道转过 t·θ_m",
    ),
    (
        "row i={i} done: m = {m}, l = {l}; lse = m + ln l = {lse} (#{n}), to global memory",
        "第 i={i} 行完成：m = {m}，l = {l}；lse = m + ln l = {lse}（#{n}），写入全局内存",
    ),
    (
        "row i={i}, b0 h0: correct [{good}] · mistaken [{bad}]",
        "第 i={i} 行，b0 h0：正确 [{good}] · 带错误 [{bad}]",
    ),
    ("row sums, mistaken b0 h{h}: {sums}", "各行之和，带错误 b0 h{h}：{sums}"),
    ("running", "运行中"),
    (
        "s saves here, e exports layers beside it",
        "s 保存到这里，e 把各层导出到它旁边",
    ),
    (
        "s saves here, e exports layers beside it ({dir}/ is made then)",
        "s 保存到这里，e 把各层导出到它旁边（届时会建立 {dir}/）",
    ),
    (
        "s_tile[{off}] = e^(S − m) = e^({s} − {m}) = {p} (#{n}), folded into l and acc, then overwritten",
        "s_tile[{off}] = e^(S − m) = e^({s} − {m}) = {p}（#{n}），累加进 l 和 acc，随后被覆盖",
    ),
    (
        "save the checkpoint (atomically) to the path shown",
        "把检查点（原子地）保存到显示的路径",
    ),
    ("save to", "保存到"),
    ("saved step {step} to {path}", "已把第 {step} 步保存到 {path}"),
    ("saved step {step}:", "已保存第 {step} 步："),
    ("saved {path}", "已保存 {path}"),
    ("saving to {path} …", "正在保存到 {path} …"),
    (
        "scale: baseline 1/√C = 1/√{C} = {sc} · mha 1/√D = 1/√{D} = {sd}",
        "缩放：baseline 1/√C = 1/√{C} = {sc} · mha 1/√D = 1/√{D} = {sd}",
    ),
    (
        "scale: × {scale_text}, so q·k × scale = {sum} × {scale} = {product}",
        "缩放：× {scale_text}，所以 q·k × scale = {sum} × {scale} = {product}",
    ),
    ("scenario", "场景"),
    ("score", "分数"),
    ("scores S = Q·Kᵀ/√d", "分数 S = Q·Kᵀ/√d"),
    (
        "scores are scaled by 1/√T instead of 1/√D, so softmax is too flat (T > D) or too sharp (T < D)",
        "分数按 1/√T 而不是 1/√D 缩放，所以 softmax 太平（T > D）或太尖（T < D）",
    ),
    (
        "scores × 1/√T = 1/√{T} = {st} instead of 1/√D = 1/√{D} = {sd}: each is √D/√T = {ratio} times the correct one",
        "分数 × 1/√T = 1/√{T} = {st}，而不是 1/√D = 1/√{D} = {sd}：每个分数都是正确值的 √D/√T = {ratio} 倍",
    ),
    ("scroll the notes when they do not fit", "说明放不下时滚动"),
    (
        "scroll this list (PgDn / PgUp: a page, Home / End)",
        "滚动这个列表（PgDn / PgUp：一页，Home / End）",
    ),
    ("seed", "种子"),
    (
        "select a cell with the arrows (or click it)",
        "用方向键选择单元格（或者单击它）",
    ),
    (
        "select a cell: query i (row), key j (column)",
        "选择格子：查询 i（行），键 j（列）",
    ),
    (
        "selected {buf}[{off}]: w, r, b act on it",
        "已选中 {buf}[{off}]：w、r、b 作用于它",
    ),
    ("seq", "seq"),
    (
        "sets the tile sizes of the flash variant, which this scenario does not run: add \"flash\" to [run].variants or remove [flash]",
        "设定的是 flash 变体的 tile 大小，而这个场景不运行 flash：请把 \"flash\" 加入 [run].variants，或者删掉 [flash]",
    ),
    (
        "seven classic attention mistakes, each traced beside the correct run",
        "七个经典的注意力错误，每个都和正确的运行并排追踪",
    ),
    (
        "showing {names} {first}..={last} of {total}",
        "显示 {names} {first}..={last}，共 {total}",
    ),
    (
        "{lead}the finite difference waits until the question is answered",
        "{lead}有问题待回答：有限差分等回答之后再显示",
    ),
    (
        "   S = {s} queries (S[i,j] in the equation is a score)",
        "   S = {s} 个查询（公式里的 S[i,j] 是分数）",
    ),
    (
        "showing {first}..={last} of {total}",
        "显示 {first}..={last}，共 {total}",
    ),
    ("side by side", "并排对照"),
    ("slice qkv into q, k, v", "把 qkv 切分为 q、k、v"),
    (
        "softmax backward dS = P ⊙ (dP − Σ dP·P)",
        "softmax 的反向传播 dS = P ⊙ (dP − Σ dP·P)",
    ),
    ("softmax over each score row", "对每一行分数做 softmax"),
    ("start from {b}[{o}] = {value}", "从 {b}[{o}] = {value} 开始"),
    ("starting", "启动中"),
    (
        "starts at q, k, v (no output projection: out is att)",
        "从 q、k、v 开始（没有输出投影：out 就是 att）",
    ),
    (
        "starts at q, k, v (output projection given)",
        "从 q、k、v 开始（给出了输出投影）",
    ),
    (
        "starts at x (input projection, output projection)",
        "从 x 开始（输入投影，输出投影）",
    ),
    (
        "starts at x (separate q, k, v projections, output projection)",
        "从 x 开始（q、k、v 各自投影，输出投影）",
    ),
    ("step", "步"),
    (
        "step through transformer attention one memory access at a time",
        "一次一个内存访问，单步执行 transformer 的注意力",
    ),
    (
        "step {i} reads cached rows 0..={i}; row {j} has been in the cache since step {j}, nothing is computed again",
        "第 {i} 步读取缓存的第 0..={i} 行；第 {j} 行从第 {j} 步起就在缓存里，不会重新计算",
    ),
    (
        "step {step}  loss {loss} ({over})  val {val}  {speed} tok/s",
        "第 {step} 步  损失 {loss}（{over}）  验证 {val}  {speed} token/秒",
    ),
    ("that step's batch", "该步的批次"),
    ("mean of steps {first}-{last}", "第 {first}-{last} 步的平均"),
    ("step {step}/{steps} · {pct}%", "第 {step}/{steps} 步 · {pct}%"),
    ("steps", "步数"),
    ("still training: x stops it first", "仍在训练：先按 x 停止"),
    ("stop training here", "在这里停止训练"),
    ("stopped (Ctrl-C)", "已停止（Ctrl-C）"),
    ("stopped at step {step}", "在第 {step} 步停止"),
    ("stopping after this step …", "这一步之后停止 …"),
    ("switch panel tab on small screens", "小屏幕上切换面板标签页"),
    ("symptom: ", "症状："),
    ("taking a snapshot of the weights …", "正在为权重拍快照 …"),
    (
        "temperature must be a number ≥ 0, got {temp}",
        "温度必须是 ≥ 0 的数，实际是 {temp}",
    ),
    (
        "tensor 'adamw.v.{name}' holds a negative second moment ({value}) at element {k}",
        "张量 'adamw.v.{name}' 的第 {k} 个元素是负的二阶矩（{value}）",
    ),
    (
        "tensor '{name}' has shape {have}, but the metadata's config needs {want}",
        "张量 '{name}' 的形状是 {have}，但元数据的配置需要 {want}",
    ),
    (
        "tensor '{name}' is missing (the metadata says {config})",
        "缺少张量 '{name}'（元数据给出的配置是 {config}）",
    ),
    (
        "tensor '{name}' is {dtype}, expected F32",
        "张量 '{name}' 是 {dtype}，应为 F32",
    ),
    (
        "tensor '{prefix}{name}' holds {value} at element {k}: a run that diverged",
        "张量 '{prefix}{name}' 的第 {k} 个元素是 {value}：这次训练发散了",
    ),
    (
        "tensor {names}{more} is not part of a TinyGPT checkpoint of this configuration ({config})",
        "张量 {names}{more} 不属于这个配置的 TinyGPT 检查点（{config}）",
    ),
    (
        "term {number}/{total}: {names} = {values}",
        "第 {number}/{total} 项：{names} = {values}",
    ),
    (
        "the TUI needs a terminal on standard input and output; for scripts use attn-trace run, explain or trace (attn-trace --help)",
        "TUI 需要在标准输入和标准输出上连接终端；在脚本里请使用 attn-trace run、explain 或 trace（attn-trace --help）",
    ),
    (
        "the baseline has a single head: use h=0 (or leave h out)",
        "baseline 只有一个头：请用 h=0（或者不写 h）",
    ),
    (
        "the classic mistakes are written into the baseline and MHA kernels: run them with variants \"baseline\" and \"mha\"",
        "经典错误写在 baseline 和 MHA 内核里：请用变体 \"baseline\" 和 \"mha\" 运行它们",
    ),
    (
        "the correct run drops {n} of {total} probabilities (drop_mask = 0){scale}",
        "正确的运行丢弃了 {total} 个概率中的 {n} 个（drop_mask = 0）{scale}",
    ),
    (
        "the correct run has no output projection either: nothing differs",
        "正确的运行也没有输出投影：没有差别",
    ),
    (
        "the correct run has no such phase: step to one it makes",
        "正确的运行没有这个阶段：请走到它有的阶段",
    ),
    ("the cursor is in the timeline's first column", "光标已在时间线的第一列"),
    (
        "the cursor is in the timeline's last column",
        "光标已在时间线的最后一列",
    ),
    ("the directory {dir} does not exist", "目录 {dir} 不存在"),
    (
        "the dropout layer exists but is never called, so training runs without attention dropout",
        "dropout 层存在但从未被调用，所以训练时没有注意力 dropout",
    ),
    (
        "the explicit mask has 0 at row i={i}, column j={j}",
        "显式掩码的值为 0，在第 i={i} 行、第 j={j} 列",
    ),
    (
        "the explicit mask has 0 at row {i}, column {j}: query {i} may not see key {j};",
        "显式掩码的值为 0，在第 {i} 行、第 {j} 列：查询 {i} 不能看到键 {j}；",
    ),
    (
        "the explicit mask has 1 at row {i}, column {j}: query {i} may see key {j}, so the score is kept",
        "显式掩码的值为 1，在第 {i} 行、第 {j} 列：查询 {i} 可以看到键 {j}，所以分数保留",
    ),
    ("the file shrank while it was read", "读取时文件变短了"),
    (
        "the flash variant has no dropout: remove dropout, set mode = \"eval\", or remove \"flash\" from [run].variants",
        "flash 变体不做 dropout：请删掉 dropout、设置 mode = \"eval\"，或者从 [run].variants 中删掉 \"flash\"",
    ),
    ("the flat offset of each next access", "每一次访问的扁平偏移"),
    ("the layer recorded no trace", "这一层没有记录 trace"),
    (
        "the log ends here: nothing left to predict",
        "日志到此结束：没有可以预测的了",
    ),
    (
        "the mask hides every pair of this query tile and key tile ({why}), so flash never loads the key tile for it: P = 0 with no read or write",
        "掩码遮住了这个查询分块与键分块的每一对（{why}），所以 flash 不会为它载入键分块：P = 0，没有任何读写",
    ),
    (
        "the mask hides every pair of this tile: flash skips it, no read and no write; {name} = 0 ({why})",
        "掩码遮住了本分块的每一对：flash 跳过它，不读也不写；{name} = 0（{why}）",
    ),
    (
        "the metadata's configuration (T={T} C={C} L={L} H={H} H_kv={H_kv}{state}) needs {need} bytes of tensors, but the file holds {data_len} bytes",
        "元数据的配置（T={T} C={C} L={L} H={H} H_kv={H_kv}{state}）需要 {need} 字节的张量，但文件里有 {data_len} 字节",
    ),
    ("the mistaken module skips it", "带错误的模块跳过了它"),
    (
        "the mistaken run has no w_proj and no out_proj phase: its output is att itself",
        "带错误的运行没有 w_proj，也没有 out_proj 阶段：它的输出就是 att 本身",
    ),
    (
        "the mistaken run has no {weights}: its q comes from x itself, so no weights decide what a token looks for",
        "带错误的运行没有 {weights}：它的 q 直接来自 x，所以没有权重决定一个 token 关注什么",
    ),
    (
        "the mistaken run has no {weights}: its q is x itself, so no weights decide what a token looks for",
        "带错误的运行没有 {weights}：它的 q 就是 x 本身，所以没有权重决定一个 token 关注什么",
    ),
    (
        "the mistaken run still uses {used} of those {n}: its weighted sum reads probs, never probs_drop",
        "带错误的运行仍然使用了其中 {n} 个中的 {used} 个：它的加权求和读取 probs，从不读取 probs_drop",
    ),
    (
        "the mistaken scores are symmetric: max |S[i,j] − S[j,i]| = {bad} over {pairs} pairs (correct run: {good})",
        "带错误的分数是对称的：在 {pairs} 对上 max |S[i,j] − S[j,i]| = {bad}（正确的运行：{good}）",
    ),
    (
        "the mistakes are made in the plain kernels and flash has none: remove \"flash\" from [run].variants",
        "这些错误写在朴素内核里，flash 没有：请从 [run].variants 中删掉 \"flash\"",
    ),
    (
        "the offset of each next access, and the value of each write",
        "每一次访问的偏移，以及每次写入的值",
    ),
    (
        "the offsets of every read of the next loop iteration, in order",
        "下一次循环迭代中每次读的偏移，按顺序",
    ),
    (
        "the optimizer state does not match the parameters",
        "优化器状态与参数不符",
    ),
    (
        "the output projection needs both w_proj and b_proj; missing {missing}",
        "输出投影需要 w_proj 和 b_proj 两者；缺少 {missing}",
    ),
    ("the parent folder", "上一级文件夹"),
    (
        "the prompt has {n} bytes but the model reads at most {max} (its seq_len): shorten it",
        "提示词有 {n} 个字节，但模型最多读取 {max} 个（它的 seq_len）：请缩短它",
    ),
    (
        "the prompt has {n} bytes; tracing a layer needs 1..={max} (the model's seq_len)",
        "提示词有 {n} 字节；追踪一层需要 1..={max}（模型的 seq_len）",
    ),
    (
        "the prompt is empty: give at least one byte",
        "提示词为空：请至少给出一个字节",
    ),
    (
        "the prompt is empty: type at least one byte",
        "提示词为空：请至少输入一个字节",
    ),
    (
        "the query heads of a group share one key/value head, but each overwrites d_k and d_v, so only the group's last head's gradient survives",
        "一组查询头共享一个键/值头，但每个头都覆盖 d_k 和 d_v，所以只有组里最后一个头的梯度留了下来",
    ),
    ("the query's own token ", "查询自己的 token "),
    (
        "the row is scores.data[{row_off}..={end}], one score per key j in {keys}",
        "这一行是 scores.data[{row_off}..={end}]，键 j 取遍 {keys}，每个键一个分数",
    ),
    (
        "the run was not traced; explain needs the event log",
        "这次运行没有被追踪；explain 需要事件日志",
    ),
    ("the same bits", "逐位相同"),
    (
        "the trace has no {what}; it does not hold the events this explanation needs",
        "trace 中没有 {what}；它不包含这个解释所需的事件",
    ),
    (
        "the trace would record {events} events, far beyond the {budget} GiB budget; {shrink}",
        "trace 将记录 {events} 个事件，远超 {budget} GiB 的预算；{shrink}",
    ),
    (
        "the trace would record {events} events (about {gib} GiB at {per_event} bytes per event), over the {budget} GiB budget; {shrink}",
        "trace 将记录 {events} 个事件（按每个事件 {per_event} 字节计约 {gib} GiB），超出 {budget} GiB 的预算；{shrink}",
    ),
    ("the turn by −tθ_m, for dQ and for dK", "转过 −tθ_m，对 dQ 和 dK 都一样"),
    (
        "the two runs never diverge: every event is the same",
        "两次运行从不分歧：每个事件都相同",
    ),
    (
        "the value after the offset is not a number (e.g. -0.31, -1e9)",
        "偏移后面的值不是数（例如 -0.31、-1e9）",
    ),
    (
        "the {pass} pass was not recorded; add \"{pass}\" to [run].passes in the scenario",
        "没有记录 {pass} 这一遍；请在场景的 [run].passes 中加上 \"{pass}\"",
    ),
    (
        "there is no dropout to seed: set [run].dropout too",
        "没有需要设置种子的 dropout：请同时设置 [run].dropout",
    ),
    ("these keys", "这些按键"),
    ("these keys (when no path is typed)", "这些按键（没有输入路径时）"),
    (
        "they differ by {d} (float rounding: flash adds in another order)",
        "相差 {d}（浮点舍入：flash 的求和顺序不同）",
    ),
    (
        "this element: exp(-1e9 − max) = 0, so probs.data[{off}] = {p} ({place})",
        "这个元素：exp(-1e9 − max) = 0，所以 probs.data[{off}] = {p}（{place}）",
    ),
    (
        "this element: probs.data[{off}] = {p} ({place})",
        "这个元素：probs.data[{off}] = {p}（{place}）",
    ),
    ("this event writes {grad}[{off}]", "这个事件写入 {grad}[{off}]"),
    (
        "this head's visible pairs: {own}; added to its group's earlier heads: {total}",
        "这个头的可见位置对：{own}；加上同组前面各头之后：{total}",
    ),
    ("this help", "这个帮助"),
    ("this is the first phase", "这已经是第一个阶段"),
    ("this is the last phase", "这已经是最后一个阶段"),
    ("this iteration sums {grad}[{off}]", "这次迭代累加 {grad}[{off}]"),
    (
        "this mask shows no pair (i, j) both ways, so the symmetry hides behind it",
        "这个掩码没有双向都可见的位置对 (i, j)，所以对称性被它掩盖了",
    ),
    (
        "this project's own attention, linear, softmax and engine sources (text)",
        "本项目自己的 attention、linear、softmax 和 engine 源代码（文本）",
    ),
    (
        "this run makes no backward pass: the mistake is in the gradients",
        "这次运行没有反向传播：这个错误出在梯度里",
    ),
    (
        "this scenario hides no pair: multiplying by an all-ones mask changes nothing",
        "这个场景没有遮住任何位置对：乘以全 1 的掩码什么也不会改变",
    ),
    ("this scenario: ", "这个场景："),
    ("this trace has no {pass} pass", "这个 trace 没有 {pass} 这一遍"),
    ("this variant has no trace", "这个变体没有 trace"),
    ("this variant recorded no events", "这个变体没有记录任何事件"),
    (
        "this write stores {now} so far; {grad}[{off}] ends at {end} when backward is done",
        "这次写入的是目前为止的 {now}；反向传播结束时 {grad}[{off}] 为 {end}",
    ),
    ("tile-local buffers (on chip)", "tile 本地缓冲区（片上）"),
    ("time", "用时"),
    (
        "timeline: one column back / forward (or click it)",
        "时间线：后退 / 前进一列（或者单击它）",
    ),
    (
        "toggle a breakpoint on the selected cell",
        "在选中的单元格上设置 / 取消断点",
    ),
    ("tokens/s", "token/秒"),
    ("too flat (T = {T} > D = {D})", "太平（T = {T} > D = {D}）"),
    ("too sharp (T = {T} < D = {D})", "太尖（T = {T} < D = {D}）"),
    (
        "trace: a prompt, then the attention map and the tracer, on the current weights",
        "追踪：用当前的权重输入提示词，然后看注意力图和 tracer",
    ),
    ("tracer", "追踪器"),
    (
        "tracing this prompt would record {events} events, over the TUI's {max}: with C = {c} prompts up to {fits} bytes fit",
        "追踪这个提示词将记录 {events} 个事件，超过了 TUI 的上限 {max}：C = {c} 时最多放得下 {fits} 个字节的提示词",
    ),
    (
        "tracing… {done} of {total} events ({pct}%)",
        "追踪中… {total} 个事件中的 {done} 个（{pct}%）",
    ),
    (
        "trained model: export this layer as scenario TOML",
        "训练好的模型：把这一层导出为场景 TOML",
    ),
    (
        "training diverged: the loss of step {step} is {loss}, not finite; try a smaller learning rate",
        "训练发散了：第 {step} 步的损失是 {loss}，不是有限数；请试试更小的学习率",
    ),
    (
        "training diverged: the loss of step {step} is {loss}, not finite{kept}; try a smaller --lr",
        "训练发散：第 {step} 步的损失是 {loss}，不是有限数{kept}；请试试更小的 --lr",
    ),
    (
        "training run on {source} (step {step}, not saved)",
        "在 {source} 上的训练（第 {step} 步，未保存）",
    ),
    (" (auto)", "（自动）"),
    (
        "training {params} parameters (T={t} C={c} L={l} H={h}{attention}, B={b}) on {data}: {train} train / {val} validation bytes",
        "训练 {params} 个参数（T={t} C={c} L={l} H={h}{attention}，B={b}），数据 {data}：{train} 训练 / {val} 验证字节",
    ),
    (
        "truncated or corrupted: the header describes {n} bytes of tensors but the file holds {data_len}",
        "被截断或已损坏：头部描述了 {n} 字节的张量，但文件里有 {data_len} 字节",
    ),
    (
        "truncated or not a safetensors checkpoint: the header claims {header_len} bytes but the file has {rest} after the length",
        "文件被截断或不是 safetensors 检查点：头部声称有 {header_len} 字节，但长度之后文件只有 {rest} 字节",
    ),
    (
        "turns channel pairs, so a head needs an even number of channels: D = d_model/n_heads = {d}",
        "旋转的是通道对，所以每个头需要偶数个通道：D = d_model/n_heads = {d}",
    ),
    (
        "turns pairs of channels, so a head needs an even number of them: D = d_model / heads = {c} / {h} = {d}",
        "按通道对旋转，所以每个头的通道数必须是偶数：D = d_model / heads = {c} / {h} = {d}",
    ),
    ("type a path instead (Enter opens it)", "改为输入路径（Enter 打开）"),
    (
        "type the offset, then Enter (v reveals it)",
        "输入偏移，然后按 Enter（v 揭晓答案）",
    ),
    ("unchanged (T = D = {D})", "不变（T = D = {D}）"),
    ("unexpected argument '{arg}'", "意外的参数 '{arg}'"),
    ("unexpected value '{value}' for {arg}", "{arg} 的意外取值 '{value}'"),
    ("unknown command '{name}'", "未知的子命令 '{name}'"),
    (
        "unknown dataset '{name}': the built-in datasets are {names}",
        "未知的数据集 '{name}'：内置的数据集有 {names}",
    ),
    (
        "unknown dist \"{name}\"; expected one of {choices}",
        "未知的分布 \"{name}\"；应为以下之一：{choices}",
    ),
    (
        "unknown index \"{other}\"; expected b, h, i and j",
        "未知的下标 \"{other}\"；应为 b、h、i 和 j",
    ),
    (
        "unknown key{hint}; expected one of: {expected}",
        "未知的键{hint}；应为以下之一：{expected}",
    ),
    (
        "unknown language \"{s}\"; expected en or zh-CN",
        "未知的语言 \"{s}\"；应为 en 或 zh-CN",
    ),
    (
        "unknown {what} \"{name}\"; expected one of {example}",
        "未知的{what} \"{name}\"；应为以下之一：{example}",
    ),
    (
        "use a smaller T (events grow with T²·C), C (and C²·T) or B, or fewer variants or passes",
        "请用更小的 T（事件数随 T²·C 增长）、C（以及 C²·T）或 B，或者更少的变体或遍",
    ),
    (
        "v[j] = m[j]·W_v + b_v   (m = memory in cross-attention, else x)",
        "v[j] = m[j]·W_v + b_v   （交叉注意力中 m = memory，否则 m = x）",
    ),
    ("val", "验证"),
    ("val loss", "验证损失"),
    ("value projection v = m·W_v + b_v", "值投影 v = m·W_v + b_v"),
    (
        "values first differ at #{correct_event} / #{mistaken_event}: correct {correct} · mistaken {mistaken}",
        "数值首次不同于 #{correct_event} / #{mistaken_event}：正确 {correct} · 错误 {mistaken}",
    ),
    ("variant", "变体"),
    (
        "variant \"{var}\" is not among [run].variants",
        "变体 \"{var}\" 不在 [run].variants 中",
    ),
    (
        "w_qkv: mha [C, 3C] = {wm} weights, gqa [C, C + 2·H_kv·D] = {wg}",
        "w_qkv：mha [C, 3C] = {wm} 个权重，gqa [C, C + 2·H_kv·D] = {wg} 个",
    ),
    (
        "weight on hidden keys per row, b0 h0: correct {good} · mistaken {bad}",
        "每行落在被遮住的键上的权重，b0 h0：正确 {good} · 带错误 {bad}",
    ),
    ("weighted sum att = P·V", "加权求和 att = P·V"),
    (
        "what each head adds to out[b0, i={i}, c], c = 0..{C}:",
        "每个头对 out[b0, i={i}, c] 的贡献，c = 0..{C}：",
    ),
    (
        "who last wrote / who reads next the selected cell",
        "谁最后写入 / 谁接下来读取选中的单元格",
    ),
    ("write", "写"),
    (
        "write of {buf}.data[{offset}] in the {phase} phase",
        "{phase} 阶段中对 {buf}.data[{offset}] 的写入",
    ),
    (
        "write: {cell} = {value}   ({place})",
        "写入：{cell} = {value}   （{place}）",
    ),
    ("writes", "写"),
    (
        "written to s_tile[{off}] = {value} (event #{n}), a tile-local cell",
        "写入 s_tile[{off}] = {value}（事件 #{n}），一个分块本地的单元格",
    ),
    ("wrote {written} events to {path}", "已把 {written} 个事件写入 {path}"),
    (
        "{variant}: {events} events, about {size}",
        "{variant}：{events} 个事件，约 {size}",
    ),
    ("{variant}: {events} events", "{variant}：{events} 个事件"),
    (
        "--format parquet writes a binary file: name it with -o FILE",
        "--format parquet 写出的是二进制文件：请用 -o FILE 给出文件名",
    ),
    ("{arg} cannot be given more than once", "{arg} 只能给出一次"),
    ("{arg} cannot be used with {prior}", "{arg} 不能和 {prior} 一起使用"),
    ("{arg} needs a value", "{arg} 需要一个值"),
    (
        "{arg} needs its value after an equal sign",
        "{arg} 的值需要写在等号后面",
    ),
    (
        "{at}: correct {good}, mistaken {bad}",
        "{at}：正确 {good}，带错误 {bad}",
    ),
    (
        "{bar:30} {pos}/{len} steps  {msg}  ETA {eta}",
        "{bar:30} {pos}/{len} 步  {msg}  剩余 {eta}",
    ),
    (
        "{buf} is not part of this run's forward pass",
        "{buf} 不属于这次运行的前向传播",
    ),
    ("{buf} is not the gradient of a buffer", "{buf} 不是某个缓冲区的梯度"),
    (
        "{buf} lives in a tile that every block reuses: no single value of it to perturb",
        "{buf} 位于每个块都会重复使用的 tile 中：没有单独的值可以扰动",
    ),
    ("{buf}[{off}] is outside the buffer", "{buf}[{off}] 在缓冲区之外"),
    (
        "{buf}[{off}] is right; now its value too: {off} VALUE, e.g. {off} {example}",
        "{buf}[{off}] 是对的；再输入它的值：{off} 值，例如 {off} {example}",
    ),
    ("{dir} is not a directory", "{dir} 不是目录"),
    (
        "{file}: --mistaken: the scenario has no [run].mistakes to trace",
        "{file}：--mistaken：场景没有可以追踪的 [run].mistakes",
    ),
    (
        "{file}: --variant {v}: the scenario does not run it ([run].variants = {variants})",
        "{file}：--variant {v}：场景不运行它（[run].variants = {variants}）",
    ),
    (
        "{file}: [run].variants: this scenario does not run {v}",
        "{file}：[run].variants：这个场景不运行 {v}",
    ),
    (
        "{file}: no event matches the filters (--variant, --pass, --phase, --buffer); check that the phase runs for this scenario and that it touches the buffer",
        "{file}：没有事件符合筛选条件（--variant、--pass、--phase、--buffer）；请检查这个阶段在这个场景中是否运行、是否访问这个缓冲区",
    ),
    (
        "{file}: the scenario does not record the {pass} pass; add \"{pass}\" to [run].passes",
        "{file}：场景没有记录 {pass} 这一遍；请在 [run].passes 中加上 \"{pass}\"",
    ),
    ("{first}, …, {last} hidden", "{first}, …, {last} 未显示"),
    ("{first}..={last} step {s}", "{first}..={last} 步长 {s}"),
    (
        "{flag} belongs to --sweep; a scenario sets its own sizes and mask",
        "{flag} 只能和 --sweep 一起用；场景有自己的尺寸和掩码",
    ),
    (
        "{flag} {v} does not match the checkpoint's {field} {have}; leave it out when resuming",
        "{flag} {v} 与检查点的 {field} {have} 不一致；继续训练时请不要给出它",
    ),
    (
        "{grad}[{off}]: no finite difference: {e}",
        "{grad}[{off}]：没有有限差分：{e}",
    ),
    (
        "{group} query heads share each key/value head (H = {heads}, H_kv = {kv_heads}): the correct run adds their shares into d_k and d_v, the mistaken run writes each over the last",
        "每个键/值头由 {group} 个查询头共享（H = {heads}，H_kv = {kv_heads}）：正确运行把它们各自的份额累加进 d_k 和 d_v，错误运行让每一份覆盖上一份",
    ),
    (
        "{how} at step {step}: loss {loss} (the last step's batch), val loss {val}, {speed} tokens/s, {secs} s",
        "{how}，第 {step} 步：损失 {loss}（最后一步的批次），验证损失 {val}，{speed} token/秒，{secs} 秒",
    ),
    ("{key} (value)", "{key}（值）"),
    ("{key} is given twice", "{key} 给出了两次"),
    (
        "{key}={value}: expected a non-negative integer",
        "{key}={value}：应为非负整数",
    ),
    ("{kind}, not a regular file", "{kind}，不是普通文件"),
    ("{kind}: give the name of a file", "{kind}：请给出文件名"),
    (
        "{lead}finite difference of ∂L/∂{p}[{off}]: computing (six untraced forward passes)…",
        "{lead}∂L/∂{p}[{off}] 的有限差分：计算中（六次不记录的前向传播）…",
    ),
    (
        "{lead}no finite difference: this walkthrough keeps no inputs to re-run",
        "{lead}没有有限差分：这个 walkthrough 没有保留可以重新运行的输入",
    ),
    (
        "{lead}{grad}[{off}]: no finite difference: {e}",
        "{lead}{grad}[{off}]：没有有限差分：{e}",
    ),
    (
        "{leak} of {n} masked probabilities are > 0 in the mistaken run, the largest {worst} at {at} (correct run: at most {good})",
        "带错误的运行中 {n} 个被掩码的概率里有 {leak} 个 > 0，最大的是 {at} 处的 {worst}（正确的运行：最多 {good}）",
    ),
    ("{msg}; see {command} --help", "{msg}；参见 {command} --help"),
    ("{names} hidden", "{names} 未显示"),
    ("{name} (validation split)", "{name}（验证集部分）"),
    ("{name} is not part of this trace", "{name} 不在这个 trace 中"),
    (
        "{name}: its splits ({train} and {val} bytes) are too short for seq {seq}: each needs at least {need}",
        "{name}：它的两部分（{train} 和 {val} 字节）对 seq {seq} 来说太短：每部分至少需要 {need}",
    ),
    (
        "{name}: {len} bytes is too short: with seq {seq} the data needs at least {need} bytes (a training and a validation window of seq + 1 bytes each)",
        "{name}：{len} 字节太短：seq 为 {seq} 时数据至少需要 {need} 字节（训练窗口和验证窗口各 seq + 1 字节）",
    ),
    ("{name}: {n} events", "{name}：{n} 个事件"),
    (
        "{name}={value} is outside the shape: expected {name} in 0..{size} ({dim} = {size})",
        "{name}={value} 超出了形状：{name} 应在 0..{size} 中（{dim} = {size}）",
    ),
    (
        "{name}[b0 j0 kv_h0 d0..{d_end}]: correct [{correct}] · mistaken [{mistaken}]",
        "{name}[b0 j0 kv_h0 d0..{d_end}]：正确 [{correct}] · 错误 [{mistaken}]",
    ),
    (
        "{name}[{idx}] is not in {name} {sizes} ({names})",
        "{name}[{idx}] 不在 {name} {sizes}（{names}）中",
    ),
    (
        "{name}[{off}] is never accessed in this trace",
        "这个 trace 从未访问 {name}[{off}]",
    ),
    (
        "{name}[{off}] is out of range: {name} has {n} elements",
        "{name}[{off}] 超出范围：{name} 只有 {n} 个元素",
    ),
    ("{n} bytes", "{n} 字节"),
    (
        "{n} bytes is larger than the {max} a data file may be",
        "{n} 字节超过了数据文件允许的 {max}",
    ),
    (
        "{n} bytes is too short: seq {seq} needs at least {need}",
        "{n} 字节太短：seq {seq} 至少需要 {need}",
    ),
    ("{n} more matrices", "还有 {n} 个矩阵"),
    ("{n} numbers", "{n} 个数"),
    ("{n} of the inputs had errors", "{n} 个输入有错误"),
    (
        "{off} is not an offset: type a whole number, e.g. 10",
        "{off} 不是偏移：请输入整数，例如 10",
    ),
    (
        "{off} of {n} mistaken rows are off 1 by more than 0.001 · correct rows sum to 1 (min {lo}, max {hi})",
        "带错误的 {n} 行中有 {off} 行与 1 相差超过 0.001 · 正确的各行之和为 1（最小 {lo}，最大 {hi}）",
    ),
    ("{path} (step {step})", "{path}（第 {step} 步）"),
    ("{path}: cannot write there: {e}", "{path}：无法写入那里：{e}"),
    ("{path}: cannot write: {e}", "{path}：无法写入：{e}"),
    (
        "{path}: is a directory; give a file name to write to",
        "{path}：是一个目录；请给出要写入的文件名",
    ),
    (
        "{place} of the {variant} variant, {pass} pass ({sizes}, {how})",
        "{variant} 变体的 {place}，{pass}传播（{sizes}，{how}）",
    ),
    ("{p} is not a whole number", "{p} 不是整数"),
    (
        "{p} parameters is over the TUI's {max}: use attn-trace train for models this big",
        "{p} 个参数超过了 TUI 的上限 {max}：这么大的模型请用 attn-trace train",
    ),
    (
        "{right} of {asked} right at the first try, {retried} after another try, {revealed} revealed, {skipped} skipped",
        "{asked} 题中第一次就答对 {right} 题，再试后答对 {retried} 题，揭晓 {revealed} 题，跳过 {skipped} 题",
    ),
    (
        "{size} bytes is larger than any checkpoint this tool writes ({max} at most)",
        "{size} 字节，比本工具写出的任何检查点都大（最多 {max}）",
    ),
    (
        "{size} bytes is larger than the {max} {what} may be",
        "{size} 字节超过了{what}允许的 {max}",
    ),
    ("{s} s", "{s} 秒"),
    (
        "{text} is not a number such as 0.003 or 3e-3",
        "{text} 不是 0.003 或 3e-3 这样的数",
    ),
    ("{text} is not a whole number ≥ 0", "{text} 不是 ≥ 0 的整数"),
    ("{text} is not a whole number ≥ 1", "{text} 不是 ≥ 1 的整数"),
    ("{text} · try again, or v reveals", "{text} · 再试一次，或者按 v 揭晓"),
    (
        "{title} · {phase} · {what} · element {element}",
        "{title} · {phase} · {what} · 元素 {element}",
    ),
    ("{title}, no mask", "{title}，无掩码"),
    (
        "{title}: no mistaken run to compare",
        "{title}：没有可以对照的带错误的运行",
    ),
    (
        "{title}: this variant recorded no events",
        "{title}：这个变体没有记录任何事件",
    ),
    (
        "{tok} is not an offset: type whole numbers (or a range like 10..=13)",
        "{tok} 不是偏移：请输入整数（或者 10..=13 这样的区间）",
    ),
    (
        "{v} {kv}, where MHA of the same shape holds {mha}",
        "{v} {kv}，同样形状的 MHA 存放 {mha}",
    ),
    ("{variant} with {names} ({passes})", "{variant} 带 {names}（{passes}）"),
    ("{variant} {n} events", "{variant} {n} 个事件"),
    (
        "{v} {reads} reads, {writes} writes ({list})",
        "{v} {reads} 次读，{writes} 次写（{list}）",
    ),
    ("{what} \"{name}\" is listed twice", "{what} \"{name}\" 列出了两次"),
    (
        "{what} {pos}, pair m={m} (channels {d0}, {d1}): angle {pos}·θ_{m} = {angle}, cos = {cos}, sin = {sin}",
        "{what} {pos}，通道对 m={m}（通道 {d0}、{d1}）：角度 {pos}·θ_{m} = {angle}，cos = {cos}，sin = {sin}",
    ),
    ("{what}: ", "{what}："),
    (
        "{what}{row}: step {row} wrote k_cache.data[{off}] = {value}   ({place}); {ci}",
        "{what}{row}：第 {row} 步写入了 k_cache.data[{off}] = {value}   （{place}）；{ci}",
    ),
    ("{working} (holding {value})", "{working}（值为 {value}）"),
    (
        "· \"{prompt}\" (T={t}) · layer {layer} of {layers} · {variant}",
        "· \"{prompt}\"（T={t}）· 第 {layer} 层，共 {layers} 层 · {variant}",
    ),
    (
        "· PgDn/PgUp: lines {from}-{to} of {n} ",
        "· PgDn/PgUp：第 {from}-{to} 行，共 {n} 行 ",
    ),
    (
        "· a byte-level GPT whose attention runs on the traced kernels",
        "· 一个字节级 GPT，它的注意力在被追踪的内核上运行",
    ),
    (
        "Σ e so far ({written} of {T}) = {sum}",
        "目前的 Σ e（{T} 项中的 {written} 项）= {sum}",
    ),
    (
        "Σ exp = {total}; each prob = exp / Σ exp, so the row sums to 1",
        "Σ exp = {total}；每个概率 = exp / Σ exp，所以这一行的和为 1",
    ),
    (
        "θ_m = base^(−2m/{D_name}) = {base}^(−2m/{D}); pair m is ({pair}), turned by t·θ_m before the scores:",
        "θ_m = base^(−2m/{D_name}) = {base}^(−2m/{D})；第 m 对是 ({pair})，在计算分数之前转过 t·θ_m：",
    ),
    (
        "θ_m = base^(−2m/D), for q and for k",
        "θ_m = base^(−2m/D)，对 q 和 k 都一样",
    ),
    ("… ({n} channels in all)", "…（共 {n} 个通道）"),
    ("… ({n} products in all)", "…（共 {n} 个乘积）"),
    ("… ({n} terms in all)", "…（共 {n} 项）"),
    ("… 1 more row", "… 还有 1 行"),
    ("… {n} more columns", "… 还有 {n} 列"),
    ("… {n} more rows", "… 还有 {n} 行"),
    ("←/→ built-ins, or a file path", "←/→ 内置数据集，或输入文件路径"),
    ("←/→ naive · flash (tiled)", "←/→ naive · flash（分块）"),
    ("←/→ none · interleaved · half", "←/→ none · interleaved · half"),
    (
        "↑/↓ choose · Enter open · ? keys · q quit",
        "↑/↓ 选择 · Enter 打开 · ? 按键 · q 退出",
    ),
    (
        "↑/↓ choose · Enter side by side · 1-7 open · ? keys · q back",
        "↑/↓ 选择 · Enter 并排对照 · 1-7 打开 · ? 按键 · q 返回",
    ),
    (" ({n} times)", "（{n} 次）"),
    (
        "\"buffer\": the {variant} {pass} pass of this scenario has no buffer \"{name}\"; its buffers are {names}",
        "\"buffer\"：这个场景的 {variant} {pass} 阶段没有缓冲区 \"{name}\"；它的缓冲区是 {names}",
    ),
    (
        "\"dims\": the trace was recorded with {name} = {value}, the scenario has {name} = {ours}",
        "\"dims\"：这份追踪记录时 {name} = {value}，而场景的 {name} = {ours}",
    ),
    (
        "\"format\": expected \"{format}\" in the header line, found {found}",
        "\"format\"：头部行应为 \"{format}\"，实际是 {found}",
    ),
    (
        "\"input\": the program was given input {k} but its trace says input {found}",
        "\"input\"：程序拿到的是输入 {k}，它的追踪却写着输入 {found}",
    ),
    (
        "\"line\": expected a source line number, found {line}",
        "\"line\"：应为源代码行号，实际是 {line}",
    ),
    (
        "\"offset\": expected a whole number, found {offset}",
        "\"offset\"：应为整数，实际是 {offset}",
    ),
    (
        "\"pass\": expected forward or backward, found \"{p}\"",
        "\"pass\"：应为 forward 或 backward，实际是 \"{p}\"",
    ),
    (
        "\"pass\": the trace was recorded for the {h} pass, not --pass {flag}",
        "\"pass\"：这份追踪记录的是 {h} 阶段，不是 --pass {flag}",
    ),
    ("\"phase\": unknown phase \"{p}\"", "\"phase\"：未知的阶段 \"{p}\""),
    (
        "\"scenario\": the trace was recorded on {name}, not on {file}",
        "\"scenario\"：这份追踪是在 {name} 上记录的，不是 {file}",
    ),
    (
        "\"value\": expected a number (or \"nan\", \"inf\", \"-inf\"), found \"{t}\"",
        "\"value\"：应为数字（或 \"nan\"、\"inf\"、\"-inf\"），实际是 \"{t}\"",
    ),
    (
        "\"value\": expected a number (or \"nan\", \"inf\", \"-inf\"), found {other}",
        "\"value\"：应为数字（或 \"nan\"、\"inf\"、\"-inf\"），实际是 {other}",
    ),
    (
        "\"variant\": the trace was recorded for {h}, not --variant {flag}",
        "\"variant\"：这份追踪记录的是 {h}，不是 --variant {flag}",
    ),
    (
        "\"variant\": unknown variant \"{v}\"",
        "\"variant\"：未知的变体 \"{v}\"",
    ),
    (
        "\"version\": this attn-trace reads version {version} of the trace format, the trace is version {found}",
        "\"version\"：这个 attn-trace 读取第 {version} 版追踪格式，这份追踪是第 {found} 版",
    ),
    (
        "\"{field}\": missing; every access needs op, buffer, offset, value, file and line",
        "\"{field}\"：缺失；每次访问都需要 op、buffer、offset、value、file 和 line",
    ),
    ("Accesses: no errors", "访问：没有错误"),
    ("Accesses: {errors} {what}", "访问：{errors} 个{what}"),
    ("errors", "错误"),
    ("Global reads / writes per buffer:", "每个缓冲区的全局读 / 写次数："),
    (
        "Grading {source} against the {variant} {pass} pass of {scenario}",
        "用 {scenario} 的 {variant} {pass} 阶段评判 {source}",
    ),
    ("Input {k} in detail:", "输入 {k} 的详情："),
    (
        "No divergence: every cell agrees with the reference.",
        "没有分歧：每个单元格都与参考实现一致。",
    ),
    (
        "Results: right (within {rtol}·|ref| + {atol}·max(1, max|ref|))",
        "结果：正确（误差在 {rtol}·|ref| + {atol}·max(1, max|ref|) 以内）",
    ),
    (
        "Results: {wrong} of {n} buffers wrong",
        "结果：{n} 个缓冲区中有 {wrong} 个错误",
    ),
    (
        "This is mistake {number} of the gallery, {name}: {symptom}",
        "这是错误集锦中的第 {number} 个错误 {name}：{symptom}",
    ),
    (
        "Verdict: right. Results within tolerance and no access errors.",
        "结论：正确。结果在容差以内，没有访问错误。",
    ),
    ("Verdict: wrong.", "结论：错误。"),
    (
        "Verdict: wrong. Right on the scenario's own input, wrong on random input {k}: right there only by luck.",
        "结论：错误。在场景自己的输入上正确，在随机输入 {k} 上错误：那里的正确只是碰巧。",
    ),
    ("and {n} more", "以及另外 {n} 个"),
    ("cannot create a temporary directory: {e}", "无法创建临时目录：{e}"),
    ("cannot run {program}: {e}", "无法运行 {program}：{e}"),
    ("cannot wait for the program: {e}", "无法等待程序结束：{e}"),
    ("cannot write the inputs file: {e}", "无法写入输入文件：{e}"),
    (
        "did not finish within {secs} s (--timeout) and was stopped",
        "没有在 {secs} 秒（--timeout）内结束，已被停止",
    ),
    (
        "empty trace: expected a header line first",
        "空的追踪：第一行应为头部行",
    ),
    ("exited with status {code}", "以状态 {code} 退出"),
    (
        "finished without writing a trace to $ATTN_TRACE_OUT",
        "结束了，但没有把追踪写到 $ATTN_TRACE_OUT",
    ),
    (
        "first {name}[{index}] = {mine}, the reference has {reference}",
        "第一个是 {name}[{index}] = {mine}，参考实现是 {reference}",
    ),
    (
        "first {name}[{index}] never written, the reference has {reference}",
        "第一个是 {name}[{index}]，从未写入，参考实现是 {reference}",
    ),
    ("flash", "flash"),
    ("from {reads}", "来自 {reads}"),
    (
        "grade: give a TRACE file or a command after --",
        "grade：请给出 TRACE 文件，或在 -- 之后给出命令",
    ),
    ("input 0 (the scenario's own)", "输入 0（场景自己的）"),
    ("input {k} (random)", "输入 {k}（随机）"),
    ("no read since the write before it", "自上一次写入以来没有读取"),
    ("none", "无"),
    ("not UTF-8 text", "不是 UTF-8 文本"),
    ("not a JSON object: {e}", "不是 JSON 对象：{e}"),
    ("reference", "参考实现"),
    ("right", "正确"),
    (
        "the first line must be the header {\"format\":\"{format}\",\"version\":{version},…}: {e}",
        "第一行必须是头部行 {\"format\":\"{format}\",\"version\":{version},…}：{e}",
    ),
    ("the reference run recorded nothing", "参考运行没有记录任何事件"),
    (
        "the scenario does not run the {pass} pass; add \"{pass}\" to [run].passes",
        "场景不运行 {pass} 阶段；请把 \"{pass}\" 加到 [run].passes",
    ),
    (
        "the scenario does not run the {variant} variant ([run].variants)",
        "场景不运行 {variant} 变体（[run].variants）",
    ),
    ("was killed by a signal", "被信号终止"),
    ("wrong", "错误"),
    (
        "wrote the inputs of the {variant} {pass} pass to {path}",
        "已把 {variant} {pass} 阶段的输入写到 {path}",
    ),
    ("your program {why}", "你的程序{why}"),
    ("yours", "你的"),
    ("yours: never written", "你的：从未写入"),
    ("{file}: cannot read the trace: {e}", "{file}：无法读取追踪：{e}"),
    ("{n} accesses recorded", "记录了 {n} 次访问"),
    (
        "· write of {name}[{offset}] at {at} overwritten before any read (harmless here: nothing accumulates){times}",
        "· {at} 处对 {name}[{offset}] 的写入在被读取之前就被覆盖（这里无害：没有累加）{times}",
    ),
    (
        "· {n} reads of {name} cells the reference never reads (waste, not an error), the first at {at}",
        "· 读取了 {n} 次参考实现从不读取的 {name} 单元格（浪费，不是错误），第一次在 {at}",
    ),
    (
        "· {n} writes of {name} cells the reference's pass does not write, the first at {at}",
        "· 写入了 {n} 次参考实现这一阶段不写的 {name} 单元格，第一次在 {at}",
    ),
    ("✓ {name}: {n} cells right", "✓ {name}：{n} 个单元格正确"),
    (
        "✗ write of {name}[{offset}] at {at} lost: written again before any read, where the reference adds into the cell{times}",
        "✗ {at} 处对 {name}[{offset}] 的写入丢失了：在被读取之前又被写入，而参考实现是往这个单元格里累加{times}",
    ),
    (
        "✗ {name}: never written ({n} cells expected)",
        "✗ {name}：从未写入（应有 {n} 个单元格）",
    ),
    (
        "✗ {name}: {bad} of {n} cells wrong or missing; {first}",
        "✗ {name}：{n} 个单元格中有 {bad} 个错误或缺失；{first}",
    ),
    (
        "✗ {op} of {name}[{offset}] outside the buffer ({size} cells) at {at}{times}",
        "✗ 在 {at} 对 {name}[{offset}] 的 {op} 越出了缓冲区（{size} 个单元格）{times}",
    ),
    ("  same value", "  值相同"),
    ("  ✗ the values differ", "  ✗ 值不同"),
    (" Reference ", " 参考实现 "),
    (" Reference · {file}:{line} ", " 参考实现 · {file}:{line} "),
    (" Yours ", " 你的 "),
    (" Yours · {file}:{line} ", " 你的 · {file}:{line} "),
    (" right ", " 正确 "),
    (" wrong ", " 错误 "),
    (" · mistake {number}: {name}", " · 错误 {number}：{name}"),
    (
        "(the source file cannot be read from here)",
        "（从这里读不到这个源文件）",
    ),
    ("1. results right", "1. 结果正确"),
    ("1. wrong cells: {list}", "1. 错误的单元格：{list}"),
    ("100 accesses forward / back", "前进 / 后退 100 次访问"),
    (
        "2. {n} access errors in {events} accesses (e jumps)",
        "2. {events} 次访问中有 {n} 个访问错误（e 跳转）",
    ),
    (
        "3. first divergence (d): {name}[{index}], reference {reference}, yours {mine}",
        "3. 第一个分歧（d）：{name}[{index}]，参考实现 {reference}，你的 {mine}",
    ),
    ("3. no divergence", "3. 没有分歧"),
    (
        "B={b} {queries}T={t} C={c} H={h} (D={d}), {mask}; the attention core only",
        "B={b} {queries}T={t} C={c} H={h} (D={d})，{mask}；只计注意力核心",
    ),
    ("buffer", "缓冲区"),
    ("Cannot open this trace", "无法打开这份追踪"),
    ("Grade your own kernel", "评判你自己的内核"),
    ("Grade your own kernel…", "评判你自己的内核…"),
    (
        "Open the trace your own kernel recorded (attn-trace inputs, a recorder from recorders/): graded, and stepped beside the reference.",
        "打开你自己的内核记录的追踪（attn-trace inputs，以及 recorders/ 中的记录器）：评判它，并与参考实现并排单步查看。",
    ),
    (
        "Seven classic attention mistakes, each traced beside the correct run: where they part, and what it does downstream.",
        "七个经典的注意力错误，每个都与正确的运行并排追踪：它们在哪里分开，以及对下游有什么影响。",
    ),
    (
        "Yours beside the reference: {trace} · {variant} {pass} of {scenario} ",
        "你的与参考实现并排：{trace} · {scenario} 的 {variant} {pass} 阶段 ",
    ),
    ("cannot read the trace: {e}", "无法读取追踪：{e}"),
    ("c{first}..={last} of {n}", "{n} 个通道中的 c{first}..={last}"),
    (
        "flash tiles: br = {br}, bc = {bc}; its tile-local working set holds {floats} floats in forward",
        "flash 分块：br = {br}，bc = {bc}；前向时它的分块本地工作集存放 {floats} 个浮点数",
    ),
    (
        "floats held in k and v (what a KV cache keeps): {parts}",
        "k 和 v 存放的浮点数（即 KV 缓存要保存的）：{parts}",
    ),
    ("global", "全局"),
    (
        "Global reads + writes per head, forward pass, D = {d}, {mask}",
        "每个头的全局读 + 写，前向，D = {d}，{mask}",
    ),
    ("global reads + writes, {pass}: {parts}", "全局读 + 写，{pass}：{parts}"),
    (
        "H_kv = {kv} key/value heads serve H = {h} query heads: each key is stored once and read by {g} query heads, so the reads above stay those of MHA while the memory is {kv}/{h} of it",
        "H_kv = {kv} 个键/值头服务 H = {h} 个查询头：每个键只存一次，由 {g} 个查询头读取，所以上面的读次数与 MHA 相同，而内存只有它的 {kv}/{h}",
    ),
    ("h{first}..={last} of {n}", "{n} 个头中的 h{first}..={last}"),
    ("its header names no scenario", "它的头部行没有写明场景"),
    ("i{first}..={last} of {n}", "{n} 行中的 i{first}..={last}"),
    ("j{first}..={last} of {n}", "{n} 列中的 j{first}..={last}"),
    ("level", "层级"),
    (
        " log–log: both grow with T², flash divided by its tile ",
        " 双对数：两者都随 T² 增长，flash 被分块大小除 ",
    ),
    (
        "M: floats of flash's tile-local working set. Naive grows as (4D + 6)·T² + D·T: every product reads its operands from global memory, and S and P are written and read back. Flash grows as 2D·T²/br + 2D·T + T: k and v are read once per query tile (these two formulas without a mask; a causal one skips about half of each T² term), so its traffic is divided by the tile, that is by the on-chip memory M ≈ 4·br·D + br² (Θ(T²·D²/M), Dao et al. 2022).",
        "M：flash 分块本地工作集的浮点数个数。朴素实现按 (4D + 6)·T² + D·T 增长：每次乘法都从全局内存读操作数，S 和 P 写出后再读回。flash 按 2D·T²/br + 2D·T + T 增长：每个查询分块只读一次 k 和 v（这两个公式不带掩码；因果掩码大约省去每个 T² 项的一半），所以它的流量被分块大小除，也就是被片上内存 M ≈ 4·br·D + br² 除（Θ(T²·D²/M)，Dao 等，2022）。",
    ),
    (
        "n/p step · d divergence · e/E errors · ? keys · q back",
        "n/p 单步 · d 分歧 · e/E 错误 · ? 按键 · q 返回",
    ),
    ("naive", "朴素"),
    (
        "naive reads q, k, v and P from global memory for every product and writes S and P there; flash reads k and v once per query tile and writes only att and lse.   c: cache misses · d: head size · m: mask · q: back",
        "朴素实现每次乘法都从全局内存读 q、k、v 和 P，并把 S 和 P 写到那里；flash 每个查询分块只读一次 k 和 v，只写 att 和 lse。   c：缓存未命中 · d：头大小 · m：掩码 · q：返回",
    ),
    ("naive: S, P", "朴素：S, P"),
    (
        "naive: the plain MHA kernel (S,P: of it, the T×T scores and probabilities); flash BR: square tiles br = bc = BR (cut to T when larger)",
        "naive：普通的 MHA 内核（S,P：其中 T×T 的分数和概率部分）；flash BR：方形分块 br = bc = BR（大于 T 时截为 T）",
    ),
    ("never written", "从未写入"),
    (
        "next head size D (16, 32, 64, 128)",
        "下一个头大小 D（16、32、64、128）",
    ),
    (
        "no *.jsonl traces here. Record one: attn-trace inputs SCENARIO -o inputs.txt, run your kernel with a recorder (recorders/), then open its trace here (docs/your_kernel.md)",
        "这里没有 *.jsonl 追踪。先记录一份：attn-trace inputs SCENARIO -o inputs.txt，用记录器（recorders/）运行你的内核，再在这里打开它的追踪（docs/your_kernel.zh-CN.md）",
    ),
    ("no access error after this one", "这之后没有访问错误"),
    ("no access error before this one", "这之前没有访问错误"),
    (
        "no divergence: every cell agrees with the reference",
        "没有分歧：每个单元格都与参考实现一致",
    ),
    ("no mask ↔ causal mask", "无掩码 ↔ 因果掩码"),
    ("of it S,P", "其中 S,P"),
    ("one access forward / back", "前进 / 后退一次访问"),
    ("reference #{n} ", "参考实现 #{n} "),
    ("shown: {parts}", "显示：{parts}"),
    (
        "the mistaken run still uses {used} of those {n} (the other {rest} are masked: probability 0 in both runs): its weighted sum reads probs, never probs_drop",
        "带错误的运行仍然使用了其中 {n} 个中的 {used} 个（另外 {rest} 个被掩码遮住：两次运行中概率都是 0）：它的加权求和读取 probs，从不读取 probs_drop",
    ),
    (
        " the plotted numbers · S, P: naive's T×T part · M: floats of flash's tiles ",
        " 图中的数 · S, P：朴素实现的 T×T 部分 · M：flash 分块的浮点数 ",
    ),
    (
        "the reference never {op}s {name}[{offset}]",
        "参考实现从不对 {name}[{offset}] 做 {op}",
    ),
    ("tile", "分块"),
    ("to the first divergence", "跳到第一个分歧"),
    (
        "to your next / previous access error",
        "跳到你的下一个 / 上一个访问错误",
    ),
    ("total", "合计"),
    ("trace", "追踪"),
    (" Traffic: naive vs flash ", " 流量：朴素实现与 flash "),
    (
        "every tile fits in {level} ({size})",
        "每个分块都放得进 {level}（{size}）",
    ),
    (
        "flash {tiles}: the tile outgrows {level} ({size}), tile-local accesses start to go to memory",
        "flash {tiles}：分块超出 {level}（{size}），分块局部访问开始落到内存",
    ),
    (
        "flash {tiles}: the tile outgrows {level} ({size}), tile-local accesses start to miss there",
        "flash {tiles}：分块超出 {level}（{size}），分块局部访问开始在那里未命中",
    ),
    ("The cache simulation failed", "缓存模拟失败"),
    ("this machine's, as the OS reports them", "本机的，由操作系统报告"),
    ("defaults: the OS reports none", "默认值：操作系统没有报告缓存"),
    ("as given", "按给定的设置"),
    (
        "the simulation stopped before its last run",
        "模拟在最后一次运行之前停止了",
    ),
    (
        "global traffic ↔ cache misses (simulated)",
        "全局流量 ↔ 缓存未命中（模拟）",
    ),
    (
        "cache misses: next level (L1, L2, memory bytes)",
        "缓存未命中：下一个层级（L1、L2、内存字节）",
    ),
    ("cache misses: T up to 512 ↔ 1024", "缓存未命中：T 最大到 512 ↔ 1024"),
    ("memory traffic", "内存流量"),
    ("{level} misses", "{level} 未命中"),
    ("bytes to and from memory", "与内存之间往返的字节"),
    ("{name} {size} {ways}-way", "{name} {size} {ways} 路"),
    ("{levels}, {line}-byte lines", "{levels}，缓存行 {line} 字节"),
    (" Cache misses: naive vs flash ", " 缓存未命中：朴素实现与 flash "),
    (
        "· {what} per head, forward, D = {d}, {mask}",
        "· 每个头的 {what}，前向，D = {d}，{mask}",
    ),
    (", ", "，"),
    ("; ", "；"),
    ("{left} or /{right}", "{left} 或 /{right}"),
    ("caches: {caches} ({from})", "缓存：{caches}（{from}）"),
    (
        "simulating… {done} of {total} runs (T = {t} under way, {secs} s)",
        "模拟中…… {total} 次运行已完成 {done} 次（正在算 T = {t}，{secs} 秒）",
    ),
    (
        "c: global traffic · l: level · t: T range · d: head size · m: mask · q: back",
        "c：全局流量 · l：层级 · t：T 范围 · d：头大小 · m：掩码 · q：返回",
    ),
    (
        " log–log: {what} per head as T grows ",
        " 双对数：每个头的 {what}随 T 增长 ",
    ),
    ("simulating…", "模拟中……"),
    (
        " {what} · tile: flash's working set, the level it fits in ",
        " {what} · 分块：flash 的工作集，以及放得进它的层级 ",
    ),
    (
        "you never write the divergent cell; the reference writes it at its event #{r}",
        "你从未写入出现分歧的单元格；参考实现在它的事件 #{r} 写入它",
    ),
    ("your first / last access", "你的第一次 / 最后一次访问"),
    ("your first access", "你的第一次访问"),
    ("your last access", "你的最后一次访问"),
    (
        "your next / previous access; the reference follows by cell",
        "你的下一次 / 上一次访问；参考实现按单元格跟随",
    ),
    ("yours #{n} ", "你的 #{n} "),
    ("yours beside the reference", "你的与参考实现并排"),
    (
        "· global accesses per head, forward, D = {d}, {mask}",
        "· 每个头的全局访问，前向，D = {d}，{mask}",
    ),
    (
        "· {n} reads of {name} feed only masked scores, whose products the mask throws away (waste, not an error), the first at {at}",
        "· 有 {n} 次对 {name} 的读取只用于被掩码的分数，它们的乘积被掩码丢弃（浪费，不是错误），第一次在 {at}",
    ),
    (" (answer it at the stop)", "（回到本站再作答）"),
    (
        " Lesson · {title} · N next stop · P previous · R back to the stop ",
        " 课程 · {title} · N 下一站 · P 上一站 · R 回到本站 ",
    ),
    (
        " N/P next/previous stop · R back to the stop · n/p step · ]/[ phase · g goto · S save screen · ? keys",
        " N/P 下一站/上一站 · R 回到本站 · n/p 单步 · ]/[ 阶段 · g 跳转 · S 保存画面 · ? 按键",
    ),
    (" N/P stop · R back · ? keys", " N/P 换站 · R 回站 · ? 按键"),
    (
        " N/P stop · R back · n/p step · g goto · ? keys",
        " N/P 换站 · R 回站 · n/p 单步 · g 跳转 · ? 按键",
    ),
    (" lessons ", " 课程 "),
    (" · R returns to the stop", " · R 回到本站"),
    (" · score {right}/{asked}", " · 得分 {right}/{asked}"),
    (
        "A teacher's path through a scenario: stops with a note and a question at each (the MHA walkthrough, backward, grouped heads, flash's online softmax).",
        "老师设计的场景路线：每站一段说明和一个问题（MHA 讲解、反向传播、分组的头、flash 的在线 softmax）。",
    ),
    ("Cannot open this lesson", "无法打开这节课程"),
    ("Lesson done · {title}", "课程完成 · {title}"),
    ("Lessons", "课程"),
    ("Lessons…", "课程…"),
    ("Question: ", "问题："),
    ("Stop {k} of {n}", "第 {k} 站，共 {n} 站"),
    (
        "The scenarios of the attention today's models run: grouped-query and multi-query heads, rotary positions, decoding from a KV cache (rolling, paged, split), sliding windows and sinks, multi-head latent attention, FlashAttention, cross-attention.",
        "当今模型所用注意力的场景：分组查询和多查询的头、旋转位置编码、从 KV 缓存解码（滚动、分页、分段）、滑动窗口与汇聚、多头潜注意力、FlashAttention、交叉注意力。",
    ),
    ("Today's attention: GQA, caches, MLA…", "当今的注意力：GQA、缓存、MLA…"),
    ("a lesson file", "课程文件"),
    ("a lesson needs at least one [[stop]]", "一节课程至少需要一个 [[stop]]"),
    ("a note = \"…\"", "一个 note = \"…\""),
    (
        "a note is at most {max} characters, found {n}: split it over two stops",
        "说明最多 {max} 个字符，实际有 {n} 个：把它分到两站",
    ),
    ("a question = \"…\" with its options", "与选项配套的 question = \"…\""),
    (
        "a question needs ask = \"offset\" or \"value\", or options and answer",
        "问题需要 ask = \"offset\" 或 \"value\"，或者 options 和 answer",
    ),
    (
        "a scenario = \"path/to/scenario.toml\"",
        "一个 scenario = \"path/to/scenario.toml\"",
    ),
    ("a title = \"…\"", "一个 title = \"…\""),
    (
        "an answer = N (1-based) with its options",
        "与选项配套的 answer = N（从 1 开始）",
    ),
    (
        "an at = \"…\" (a position, as g takes it)",
        "一个 at = \"…\"（位置，写法与 g 相同）",
    ),
    (
        "an event number (#123), an element (b=0 h=1 i=2 j=1), a cell (scores[16]) or a phase",
        "事件编号（#123）、元素（b=0 h=1 i=2 j=1）、单元格（scores[16]）或阶段",
    ),
    ("an option number from 1 to {n}", "1 到 {n} 之间的选项编号"),
    ("answer", "答案"),
    (
        "answer goes with options = [\"…\", \"…\"]",
        "answer 要与 options = [\"…\", \"…\"] 一起给出",
    ),
    (
        "answer goes with options; with ask the log gives the answer",
        "answer 要与 options 一起给出；用 ask 时答案来自日志",
    ),
    (
        "ask = \"offset\" asks the next access, but this stop is the last event",
        "ask = \"offset\" 问的是下一次访问，但这一站已是最后一个事件",
    ),
    (
        "ask = \"value\" asks the next write, but no write follows this stop",
        "ask = \"value\" 问的是下一次写入，但这一站之后没有写入",
    ),
    ("at most {max} stops, found {n}", "最多 {max} 站，实际有 {n} 站"),
    ("could not save the snapshot: {e}", "无法保存快照：{e}"),
    ("could not write {path}: {e}", "无法写入 {path}：{e}"),
    (
        "empty file: a lesson needs a title, a scenario and at least one [[stop]]",
        "空文件：一节课程需要 title、scenario 和至少一个 [[stop]]",
    ),
    (
        "event {n} is in the {there} pass, not the {asked} pass",
        "事件 {n} 在 {there} 遍中，不在 {asked} 遍中",
    ),
    (
        "expected 2 to {max} options, found {n}",
        "应为 2 到 {max} 个选项，实际有 {n} 个",
    ),
    (
        "expected 24 to 1000 columns and 6 to 500 rows, found {w}x{h}",
        "应为 24 到 1000 列、6 到 500 行，实际为 {w}x{h}",
    ),
    ("expected COLUMNSxROWS, e.g. 120x40", "应为 列数x行数，例如 120x40"),
    (
        "expected [[stop]] tables, found {found}",
        "应为 [[stop]] 表，实际为{found}",
    ),
    (
        "expected a position, found an empty string",
        "应为一个位置，实际为空字符串",
    ),
    (
        "expected an array of strings, found {found}",
        "应为字符串数组，实际为{found}",
    ),
    ("expected {forms}", "应为{forms}"),
    ("expected {forms}, found {text}", "应为{forms}，实际为 {text}"),
    (
        "give either ask (the log answers) or options and answer (you answer), not both",
        "ask（答案来自日志）与 options 加 answer（答案由你给出）只能二选一",
    ),
    ("lesson", "课程"),
    (
        "lesson: back to the current stop, to answer its question",
        "课程：回到本站，回答它的问题",
    ),
    (
        "lesson: next / previous stop (tui --lesson)",
        "课程：下一站 / 上一站（tui --lesson）",
    ),
    (
        "missing: a lesson needs at least one [[stop]]",
        "缺失：一节课程至少需要一个 [[stop]]",
    ),
    ("missing: every lesson needs {what}", "缺失：每节课程都需要{what}"),
    ("missing: every stop needs {what}", "缺失：每一站都需要{what}"),
    (
        "not UTF-8 text: save the lesson file as UTF-8",
        "不是 UTF-8 文本：请把课程文件存为 UTF-8",
    ),
    ("not quite: it is not {k}) {option}", "不太对：不是 {k}) {option}"),
    (
        "not quite: read {k} of {n} of iteration {name}: {why}",
        "不太对：迭代 {name} 的第 {k} 次读（共 {n} 次）：{why}",
    ),
    (
        "not quite: {buf}[{off}] does not get {v}",
        "不太对：{buf}[{off}] 得到的不是 {v}",
    ),
    ("not quite: {why}{hint}", "不太对：{why}{hint}"),
    (
        "open the lessons / today's attention scenarios",
        "打开课程 / 当今注意力的场景",
    ),
    (
        "phase {phase} is in the {there} pass, not the {asked} pass",
        "阶段 {phase} 在 {there} 遍中，不在 {asked} 遍中",
    ),
    ("question kind", "问题类型"),
    (
        "save the screen as SVG and text in snapshots/",
        "把画面存为 SVG 和文本，放进 snapshots/",
    ),
    ("saved {svg} and {txt}", "已保存 {svg} 和 {txt}"),
    (
        "the command that reopens this position (copied via OSC 52)",
        "重新打开此位置的命令（通过 OSC 52 复制）",
    ),
    ("the last stop: P goes back, q leaves", "最后一站：P 返回，q 离开"),
    ("the scenario traces no kernel", "这个场景没有追踪任何内核"),
    ("this is the first stop", "这是第一站"),
    ("this read has {coords}", "这次读取的是 {coords}"),
    ("this write has {coords}", "这次写入的是 {coords}"),
    ("type a number, e.g. -0.31 or 1e-3", "输入一个数，例如 -0.31 或 1e-3"),
    (
        "type the number of an option, 1 to {n}, then Enter",
        "输入选项编号（1 到 {n}），然后按 Enter",
    ),
    (
        "type the value, then Enter (v reveals it)",
        "输入值，然后按 Enter（v 揭晓答案）",
    ),
    ("which offset does the next access use?", "下一次访问用哪个偏移？"),
    (
        "which offset does the next access, {what}, use?",
        "下一次访问（{what}）用哪个偏移？",
    ),
    ("which value does the next write store?", "下一次写入存的是什么值？"),
    (
        "which value does the next write, {buf}[{off}], store?",
        "下一次写入 {buf}[{off}] 存的是什么值？",
    ),
    (
        "you typed {typed} = {buf}[{coords}]; {this}",
        "你输入的 {typed} = {buf}[{coords}]；{this}",
    ),
    (
        "you typed {typed}, past the end of {buf}, whose {len} elements are 0..{last}",
        "你输入的 {typed} 超出了 {buf} 的末尾，它的 {len} 个元素是 0..{last}",
    ),
    (
        "{cmd}  (copied where the terminal allows OSC 52)",
        "{cmd}  （终端支持 OSC 52 时已复制）",
    ),
    ("{file}: --at: {e}", "{file}: --at: {e}"),
    ("{file}: scenario: {e}", "{file}: scenario: {e}"),
    ("{formula} with {derived}", "{formula}，其中 {derived}"),
    ("{formula}: you typed {typed}", "{formula}：你输入的是 {typed}"),
    (
        "{name}[{off}] is never accessed in the {pass} pass",
        "{name}[{off}] 在 {pass} 遍中从未被访问",
    ),
    (
        "{n} stops. Questions: {right} of {asked} right at the first try, {retried} after another try, {revealed} revealed, {open} not answered.",
        "共 {n} 站。问题：{asked} 道中 {right} 道第一次就答对，{retried} 道再试后答对，{revealed} 道揭晓，{open} 道未作答。",
    ),
    ("{formula}: {place}", "{formula}：{place}"),
    ("tile-local: past the caches", "tile 本地：绕过缓存"),
    ("{level} hit", "{level} 命中"),
    ("{level} miss", "{level} 未命中"),
    ("from memory", "来自内存"),
    ("line {start}–{end}", "行 {start}–{end}"),
    ("this machine's", "本机的"),
    ("default", "默认的"),
    (
        "caches ({whose}): {levels}; misses marked on the timeline (m hides)",
        "缓存（{whose}）：{levels}；时间线上标出未命中（按 m 隐藏）",
    ),
    ("caches hidden", "缓存已隐藏"),
    (
        "cache model: hit or miss and line of this access; misses on the timeline",
        "缓存模型：这次访问命中与否及其缓存行；时间线上标出未命中",
    ),
    ("sliding window W={w}", "滑动窗口 W={w}"),
    ("sliding window W={w}, sinks={sinks}", "滑动窗口 W={w}，sinks={sinks}"),
    (
        "j={j} ≤ i−W = {i}−{w}: key {j} has slid out of query {i}'s window of {w} keys and is not a sink, so it is hidden;",
        "j={j} ≤ i−W = {i}−{w}：键 {j} 已经滑出查询 {i} 的 {w} 个键的窗口，又不是汇聚 token（sink），所以被遮住；",
    ),
    (
        "j={j} < sinks = {sinks}: key {j} is an attention sink, which every query sees whatever its window, so the score is kept",
        "j={j} < sinks = {sinks}：键 {j} 是注意力汇聚 token（sink），不论窗口如何每个查询都能看到它，所以分数保留",
    ),
    (
        "i−W < j ≤ i ({i}−{w} < {j} ≤ {i}): key {j} is in query {i}'s window, so the score is kept",
        "i−W < j ≤ i（{i}−{w} < {j} ≤ {i}）：键 {j} 在查询 {i} 的窗口内，所以分数保留",
    ),
    (
        "sink tokens stay visible when a window would hide them: set [run].window too",
        "汇聚 token（sink）是在窗口会遮住它们时仍然可见的位置：请同时设置 [run].window",
    ),
    (
        "a sliding window narrows the causal mask: remove [run].mask or set it to \"causal\"",
        "滑动窗口是收窄的因果掩码：请删除 [run].mask 或把它设为 \"causal\"",
    ),
    (
        "a sliding window counts positions of one sequence: remove [shape].S (cross-attention)",
        "滑动窗口按同一个序列的位置计数：请删除 [shape].S（交叉注意力）",
    ),
    ("an integer from 0 to T = {max}", "0 到 T = {max} 之间的整数"),
    (
        "flash visits {visited} of its {all} tile pairs per head: the {mask} hides the other {skipped} entirely, so they are skipped",
        "flash 每个头访问其 {all} 个分块对中的 {visited} 个：{mask} 完全遮住了另外 {skipped} 个，所以跳过它们",
    ),
    (
        "metadata has 'window' but no 'sinks'",
        "元数据有 'window' 却没有 'sinks'",
    ),
    (
        "metadata has 'sinks' but no 'window'",
        "元数据有 'sinks' 却没有 'window'",
    ),
    (
        "keep positions visible that a window would hide: give a window too",
        "让窗口会遮住的位置保持可见：请同时给出窗口",
    ),
    ("must be 0..={max}, got {v}", "必须在 0..={max} 之间，实际是 {v}"),
    ("must be 0..={max}, got {n}", "必须在 0..={max} 之间，实际是 {n}"),
    ("window", "窗口"),
    ("sinks", "汇聚数"),
    ("W: recent positions (empty: all)", "W：看到的最近位置（空：全部）"),
    ("first N always seen (empty: 0)", "总是可见的开头位置（空：0）"),
    (
        "KV cache per token and layer (f32):",
        "每个 token、每层的 KV 缓存（f32）：",
    ),
    ("floats, {bytes} bytes", "个浮点数，{bytes} 字节"),
    (
        "MLA with DeepSeek-V2's ratios R = 4·D = {r}, DR = {half} = {dr}: one latent row and one rotary key shared by every head, so its cache does not grow with H",
        "MLA 按 DeepSeek-V2 的比例 R = 4·D = {r}、DR = {half} = {dr}：所有头共享一行潜向量和一个旋转键，所以它的缓存不随 H 增长",
    ),
    (
        "decoding token by token: step t reads the cached rows 0..=t, so each query head reads {sum} cached rows over the {t} steps",
        "逐个 token 解码：第 t 步读取缓存的 0..=t 行，所以在 {t} 步中每个查询头共读取 {sum} 个缓存行",
    ),
    (
        "decoding token by token through a window of W = {w} with sinks N = {sinks}, which holds every row up to T = {t}: step t reads the cached rows 0..=t, so each query head reads {sum} cached rows over the {t} steps",
        "逐个 token 解码，窗口 W = {w}，N = {sinks} 个汇聚 token（sink），在 T = {t} 以内容得下每一行：第 t 步读取缓存的 0..=t 行，所以在 {t} 步中每个查询头共读取 {sum} 个缓存行",
    ),
    (
        "decoding token by token through a window of W = {w}: step t reads the last min(t+1, W) cached rows, so each query head reads {ramp} rows in the first W = {m} steps and {m} in each of the other {rest}: {sum} cached rows over the {t} steps, where the whole cache would cost {full}",
        "逐个 token 解码，窗口 W = {w}：第 t 步读取缓存中最后 min(t+1, W) 行，所以每个查询头在前 W = {m} 步读取 {ramp} 行，其余 {rest} 步每步 {m} 行：在 {t} 步中共 {sum} 个缓存行，而读取整个缓存要 {full}",
    ),
    (
        "decoding token by token through a window of W = {w} with sinks N = {sinks}: step t reads min(t+1, W+N) cached rows (the sinks and the last W), so each query head reads {ramp} rows in the first W+N = {m} steps and {m} in each of the other {rest}: {sum} cached rows over the {t} steps, where the whole cache would cost {full}",
        "逐个 token 解码，窗口 W = {w}，N = {sinks} 个汇聚 token（sink）：第 t 步读取 min(t+1, W+N) 个缓存行（各个汇聚 token 与最后 W 行），所以每个查询头在前 W+N = {m} 步读取 {ramp} 行，其余 {rest} 步每步 {m} 行：在 {t} 步中共 {sum} 个缓存行，而读取整个缓存要 {full}",
    ),
    (
        "decode step t: each part's softmax of its own scores, and its log-sum-exp",
        "解码第 t 步：每一段对自己的分数做 softmax，并记下它的 log-sum-exp",
    ),
    (
        "decode step t: each part's output o_part[p] = Σ_{j in p} p_part[t,j]·v_cache[j]",
        "解码第 t 步：每一段的输出 o_part[p] = Σ_{j in p} p_part[t,j]·v_cache[j]",
    ),
    (
        "decode step t: merge the parts, att[t] = Σ_p w_part[p]·o_part[p]",
        "解码第 t 步：合并各段，att[t] = Σ_p w_part[p]·o_part[p]",
    ),
    ("   ◀ the element's part", "   ◀ 该元素所在的段"),
    (", paged in blocks of BS = {bs}", "，分页存放，每块 BS = {bs}"),
    (", split into parts of L = {l}", "，切成每段 L = {l} 的若干段"),
    (
        "3. Softmax of part p={p} of row (b={b}{head}, i={i})",
        "3. 行 (b={b}{head}, i={i}) 第 p={p} 段的 softmax",
    ),
    (
        "4. Weighted sum of part p={p} for query i={i}",
        "4. 查询 i={i} 第 p={p} 段的加权求和",
    ),
    (
        "5. Merge of the parts for query i={i} (decode_merge)",
        "5. 合并查询 i={i} 的各段（decode_merge）",
    ),
    (
        "B = {b} rows of ⌈T/BS⌉ = ⌈{t}/{bs}⌉ = {mb} block ids below num_blocks = {nb}",
        "B = {b} 行，每行 ⌈T/BS⌉ = ⌈{t}/{bs}⌉ = {mb} 个小于 num_blocks = {nb} 的块编号",
    ),
    (
        "[bracketed]: the element's part p={part}, its weight times channel d of its o_part",
        "[括号内]：该元素所在的段 p={part}，其权重乘以它的 o_part 的通道 d",
    ),
    (
        "a block id below num_blocks = {nb}",
        "一个小于 num_blocks = {nb} 的块编号",
    ),
    (
        "a decode step under a sliding window has no score for j={j} at i={i}: key {j} slid out of the window of {w} keys (j ≤ i − W = {lo}) and is not a sink, so step {i} never reads it, and its slot holds a later key",
        "滑动窗口下的解码步在 i={i} 处没有 j={j} 的分数：键 {j} 已滑出 {w} 个键的窗口（j ≤ i − W = {lo}），且不是汇聚 token，所以第 {i} 步从不读取它，它的槽位已存放更晚的键",
    ),
    ("a number of parts from 1 to T = {max}", "从 1 到 T = {max} 的段数"),
    (
        "a paged cache is where a decode run keeps its keys and values: set [run].decode = true",
        "分页缓存是解码运行存放键和值的地方：请设置 [run].decode = true",
    ),
    (
        "a sliding window decodes through its own rolling cache of N + W rows: remove [paged] or [run].window",
        "滑动窗口通过它自己的 N + W 行滚动缓存解码：请删除 [paged] 或 [run].window",
    ),
    (
        "a sliding window's step already reads at most N + W keys, and splitting them is not traced: remove [run].split_kv or [run].window",
        "滑动窗口的每一步最多只读 N + W 个键，对它们分段的情形没有追踪：请删除 [run].split_kv 或 [run].window",
    ),
    ("a whole number from 0", "从 0 开始的整数"),
    (
        "block {id} is already row {b0}'s block {k0}: a block holds one place of the sequences that share it (prefix caching shares the same place)",
        "块 {id} 已经是第 {b0} 行的第 {k0} 块：一个块只存放共享它的序列中的同一个位置段（前缀缓存共享的是相同的位置）",
    ),
    (
        "decoded token by token through a rolling cache of N + W = {sinks} + {w} rows",
        "借助 N + W = {sinks} + {w} 行的滚动缓存逐个 token 解码",
    ),
    ("exp(lse − max)", "exp(lse − max)"),
    (
        "generation runs step by step: step t projects token t once and writes its key and value into its row of the rolling cache: a sink's own row, else slot t % W after the sinks",
        "生成逐步进行：第 t 步只对 token t 投影一次，把它的键和值写入滚动缓存中它的行：汇聚 token 有自己的行，其余写入汇聚行之后的槽位 t % W",
    ),
    (
        "generation runs step by step: step t projects token t once and writes its key and value into row t % BS of the block the block table lists for it",
        "生成逐步进行：第 t 步只对 token t 投影一次，把它的键和值写入块表为它列出的块中的第 t % BS 行",
    ),
    (
        "mask: none needed: step {i} reads only the cached keys it sees: {reason}",
        "掩码：不需要：第 {i} 步只读取它能看到的缓存键：{reason}",
    ),
    (
        "max = {max}; Σ exp = {total}; each w_part = exp / Σ exp",
        "max = {max}；Σ exp = {total}；每个 w_part = exp / Σ exp",
    ),
    (
        "missing: a paged cache needs block_size, num_blocks, and a table or a seed",
        "缺失：分页缓存需要 block_size、num_blocks，以及块表或种子",
    ),
    (
        "missing: give the block table (a row of ⌈T/BS⌉ block ids per sequence) or a seed to deal the blocks",
        "缺失：请给出块表（每个序列一行 ⌈T/BS⌉ 个块编号），或给出分配块用的种子",
    ),
    (
        "rotary positions are traced in a decode run's contiguous cache only: remove [run].rope, or [paged] and [run].window",
        "旋转位置编码只在解码运行的连续缓存中追踪：请删除 [run].rope，或删除 [paged] 和 [run].window",
    ),
    (
        "row {bb} is too long: T = {t} positions in blocks of {bs} fill {mb} blocks, it lists {n}",
        "第 {bb} 行太长：T = {t} 个位置按每块 {bs} 个只占 {mb} 块，它却列出了 {n} 个",
    ),
    (
        "row {bb} is too short for T = {t}: {t} positions in blocks of {bs} need {mb} block ids, it lists {n}",
        "第 {bb} 行对 T = {t} 来说太短：{t} 个位置按每块 {bs} 个需要 {mb} 个块编号，它只列出了 {n} 个",
    ),
    (
        "rows {b0} and {bb} share block {id}, but their tokens at positions {lo}..{hi} differ: prefix caching shares a block only between sequences with the same tokens there",
        "第 {b0} 行和第 {bb} 行共享块 {id}，但它们在位置 {lo}..{hi} 的 token 不同：前缀缓存只在这些位置 token 相同的序列之间共享块",
    ),
    (
        "split_kv splits a decode step's cache: set [run].decode = true",
        "split_kv 切分的是解码步的缓存：请设置 [run].decode = true",
    ),
    (
        "the parts' outputs are weighed by w_part = softmax(lse_part): each part's share of the whole row's Σ exp",
        "各段的输出按 w_part = softmax(lse_part) 加权：即每段在整行 Σ exp 中所占的份额",
    ),
    ("step {i} reads it at {line}", "第 {i} 步在此处读取它：{line}"),
    (
        "step {i} reads only the keys it sees: the sinks 0..{sinks} and the window {lo}..={i}; the rows of the keys that slid out hold later positions now",
        "第 {i} 步只读取它能看到的键：汇聚 token 0..{sinks} 和窗口 {lo}..={i}；滑出窗口的键所在的行现在存放的是更晚的位置",
    ),
    (
        "this element: p_part.data[{off}] = {p} ({place}), its share of part {part} alone",
        "该元素：p_part.data[{off}] = {p}（{place}），只是它在第 {part} 段中的份额",
    ),
    (
        "Σ exp = {total}; each prob = exp / Σ exp, so the part's probabilities sum to 1",
        "Σ exp = {total}；每个概率 = exp / Σ exp，所以该段的概率之和为 1",
    ),
    (
        "{lo}..={hi}, part p = j / L = {j} / {l} = {p} of the cached positions",
        "{lo}..={hi}，即缓存位置的第 p = j / L = {j} / {l} = {p} 段",
    ),
    (
        "{set}, the cached positions the window keeps",
        "{set}，即窗口保留的缓存位置",
    ),
    (
        "the sequences need B·⌈T/BS⌉ = {b}·{mb} = {need} blocks, but the pool has {nb}",
        "这些序列需要 B·⌈T/BS⌉ = {b}·{mb} = {need} 个块，但块池只有 {nb} 个",
    ),
    (
        "the table is given, so there is nothing to shuffle: remove seed or table",
        "块表已经给出，没有什么需要打乱：请删除 seed 或 table",
    ),
    ("  block phys {p}", "  块 phys {p}"),
    (
        "decode step t: the parts' weights w_part = softmax(lse_part)",
        "解码第 t 步：各段的权重 w_part = softmax(lse_part)",
    ),
    (
        "lse = m + ln Σ e = {m} + ln {sum} = ",
        "lse = m + ln Σ e = {m} + ln {sum} = ",
    ),
    (
        "pass a: row max so far m = max({x}[{range}]) = ",
        "第 a 遍：目前的行最大值 m = max({x}[{range}]) = ",
    ),
    (
        "sink logit backward: d_sink = −Σ P_sink·D over the head's rows",
        "汇聚 logit 的反向：d_sink = −Σ P_sink·D，对该头的所有行求和",
    ),
    (
        "only a run with [run].sink_logit = true reads sink logits: set it, or remove sink",
        "只有 [run].sink_logit = true 的运行才读取汇聚 logit：设置它，或删除 sink",
    ),
    (
        "decode runs are traced without sink logits; leave out sink_logit or decode",
        "解码运行的追踪不含汇聚 logit；去掉 sink_logit 或 decode 之一",
    ),
    (
        "the mistakes are written into kernels without sink logits; leave out sink_logit or [run].mistakes",
        "这些错误写在不含汇聚 logit 的内核里；去掉 sink_logit 或 [run].mistakes 之一",
    ),
    (
        "the baseline has a single head and so a single sink logit, but H = {h}: set [shape].H = 1 or remove \"baseline\" from [run].variants",
        "基线只有一个头，因此只有一个汇聚 logit，但 H = {h}：设置 [shape].H = 1，或从 [run].variants 中删除 \"baseline\"",
    ),
    (
        "  probs: {n} rows, each sums to 1 with its sink's share p_sink (min {lo}, max {hi})",
        "  probs：{n} 行，每行加上其汇聚份额 p_sink 后的和都是 1（最小 {lo}，最大 {hi}）",
    ),
    (
        "pass a: the sink logit starts the row max, m = sink = ",
        "第 a 遍：汇聚 logit 作为行最大值的起点，m = sink = ",
    ),
    (
        "pass a: row max so far m = max(sink, {x}[{range}]) = ",
        "第 a 遍：目前的行最大值 m = max(sink, {x}[{range}]) = ",
    ),
    (
        "Σ e so far (e_sink = exp({s} − {m}) = {e} and {written} of {T}) = {sum}",
        "到目前为止的 Σ e（e_sink = exp({s} − {m}) = {e}，以及 {T} 个中的 {written} 个）= {sum}",
    ),
    (
        "the sink's share: P_sink = e_sink / Σ e = {e} / {sum} = ",
        "汇聚的份额：P_sink = e_sink / Σ e = {e} / {sum} = ",
    ),
    (
        "D = Σ_k dP·P, kept for the sink logit's gradient: ",
        "D = Σ_k dP·P，留给汇聚 logit 的梯度使用：",
    ),
    (
        "Q_tile ← q rows i0..i1 (global → tile);  m = sink, l = 1 (the sink's own term), acc = 0",
        "Q_tile ← q 的第 i0..i1 行（全局 → 分块）；  m = sink，l = 1（汇聚自己的项），acc = 0",
    ),
    (
        "m[{off}] = sink = {m}: the row starts at its sink logit",
        "m[{off}] = sink = {m}：这一行从它的汇聚 logit 开始",
    ),
    (
        "l[{off}] = 1 = e^(sink − m): the sink's term of the row's sum, with no value in acc",
        "l[{off}] = 1 = e^(sink − m)：汇聚在行和中的项，它在 acc 中没有值",
    ),
    (
        "sink[{off}] = {value}: this head's sink logit (gpt-oss)",
        "sink[{off}] = {value}：这个头的汇聚 logit（gpt-oss）",
    ),
    (
        "sink logit: {cell} = {s} ({place}), one more logit of the row that carries no value",
        "汇聚 logit：{cell} = {s}（{place}），这一行多出的一个 logit，它不携带值",
    ),
    (
        "max = max(sink, scores) = {max}   (read first, so exp never overflows)",
        "max = max(sink, scores) = {max}   （先读取，这样 exp 永远不会溢出）",
    ),
    (
        "Σ exp = exp(sink − max) + Σ_j exp(score − max) = {e} + {rest} = {total}; each prob = exp / Σ exp, so the row sums to 1 − P_sink",
        "Σ exp = exp(sink − max) + Σ_j exp(score − max) = {e} + {rest} = {total}；每个概率 = exp / Σ exp，所以这一行的和是 1 − P_sink",
    ),
    (
        "the sink's share: P_sink = exp(sink − max) / Σ exp = {e} / {total} = {p} ({cell}, {place})",
        "汇聚的份额：P_sink = exp(sink − max) / Σ exp = {e} / {total} = {p}（{cell}，{place}）",
    ),
    (", a sink logit per head", "，每个头一个汇聚 logit"),
    (
        "softmax backward kept this row's Σ_k dP·P = {dot} in {cell} ({place})",
        "softmax 反向把这一行的 Σ_k dP·P = {dot} 保存在 {cell}（{place}）",
    ),
    (
        "the sink carries no value, so its own softmax gradient is P_sink × (0 − D) in every row of the head",
        "汇聚不携带值，所以在该头的每一行中它自己的 softmax 梯度是 P_sink × (0 − D)",
    ),
    (
        "2b. The sink logit's gradient (sink_back)",
        "2b. 汇聚 logit 的梯度（sink_back）",
    ),
    (
        "the row starts at m = sink[{h}] = {m0}, l = 1: e^(sink − m) = 1 is the sink logit's term of l, with no value in acc",
        "这一行从 m = sink[{h}] = {m0}、l = 1 开始：e^(sink − m) = 1 是汇聚 logit 在 l 中的项，它在 acc 中没有值",
    ),
    (
        "P_sink = e^(sink − lse) = e^({s} − {lse}) = {p}: the sink's share of the row, which backward recomputes from lse",
        "P_sink = e^(sink − lse) = e^({s} − {lse}) = {p}：汇聚在这一行中的份额，反向时由 lse 重新算出",
    ),
    (
        "P_sink = e^(sink − lse) = e^({s} − {lse}) = {p}: row i's sink share, recomputed from lse in flash_delta (p_sink.data[{off}], {place})",
        "P_sink = e^(sink − lse) = e^({s} − {lse}) = {p}：第 i 行的汇聚份额，在 flash_delta 中由 lse 重新算出（p_sink.data[{off}]，{place}）",
    ),
    (
        "3b. The sink logit's gradient (sink_back)",
        "3b. 汇聚 logit 的梯度（sink_back）",
    ),
    (
        "\"mla\" projects keys and values up from a latent: give its sizes [shape].kv_rank and [shape].rope_dim",
        "\"mla\" 从潜变量向上投影出键和值：请给出它的尺寸 [shape].kv_rank 和 [shape].rope_dim",
    ),
    (
        "backward of c_kv = x·W_dkv, added to d_x",
        "c_kv = x·W_dkv 的反向，加到 d_x 上",
    ),
    (
        "backward of k_nope = c_kv·W_uk, added to d_c_kv",
        "k_nope = c_kv·W_uk 的反向，加到 d_c_kv 上",
    ),
    ("backward of k_pe = x·W_kr", "k_pe = x·W_kr 的反向"),
    ("backward of q = x·W_q, added to d_x", "q = x·W_q 的反向，加到 d_x 上"),
    ("backward of v = c_kv·W_uv", "v = c_kv·W_uv 的反向"),
    (
        "decode step t: att[t] = o_lat·W_uv, each head's values",
        "解码第 t 步：att[t] = o_lat·W_uv，即每个头的值",
    ),
    (
        "decode step t: cache row [c_kv | k_pe] = x[t]·[W_dkv | W_kr]",
        "解码第 t 步：缓存行 [c_kv | k_pe] = x[t]·[W_dkv | W_kr]",
    ),
    (
        "decode step t: o_lat = Σ_j P[t,j]·c_kv[j]",
        "解码第 t 步：o_lat = Σ_j P[t,j]·c_kv[j]",
    ),
    ("decode step t: q[t] = x[t]·W_q", "解码第 t 步：q[t] = x[t]·W_q"),
    (
        "decode step t: q_lat = q_nope·W_ukᵀ, the query in the latent space",
        "解码第 t 步：q_lat = q_nope·W_ukᵀ，即潜空间中的查询",
    ),
    (
        "keys up from the latent, k_nope = c_kv·W_uk",
        "从潜变量向上投影出键，k_nope = c_kv·W_uk",
    ),
    (
        "kv_rank and rope_dim size multi-head latent attention, which runs on its own: set [run].variants = [\"mla\"]",
        "kv_rank 和 rope_dim 是多头潜注意力的尺寸，它单独运行：请设置 [run].variants = [\"mla\"]",
    ),
    (
        "latent c_kv = x·W_dkv, one row of R for every head",
        "潜变量 c_kv = x·W_dkv，所有头共用一行 R 个通道",
    ),
    (
        "missing: multi-head latent attention needs both kv_rank (R, the latent's channels) and rope_dim (DR, the rotary channels)",
        "缺失：多头潜注意力同时需要 kv_rank（R，潜变量的通道数）和 rope_dim（DR，旋转通道数）",
    ),
    (
        "multi-head latent attention does not read this tensor: its projections are w_q, w_dkv, w_kr, w_uk and w_uv, without biases",
        "多头潜注意力不读取这个张量：它的投影是 w_q、w_dkv、w_kr、w_uk 和 w_uv，都没有偏置",
    ),
    (
        "multi-head latent attention has one latent for every head, not grouped key/value heads: remove H_kv",
        "多头潜注意力所有头共用一个潜变量，而不是分组的键/值头：请删除 H_kv",
    ),
    (
        "multi-head latent attention is traced as self-attention: remove [shape].S",
        "多头潜注意力按自注意力追踪：请删除 [shape].S",
    ),
    (
        "multi-head latent attention is traced without dropout: remove [run].dropout",
        "多头潜注意力的追踪不含 dropout：请删除 [run].dropout",
    ),
    (
        "multi-head latent attention is traced without sink logits: remove [run].sink_logit",
        "多头潜注意力的追踪不含汇聚 logit：请删除 [run].sink_logit",
    ),
    (
        "multi-head latent attention starts from x through its own projections: remove q, k and v",
        "多头潜注意力从 x 出发，经过它自己的投影：请删除 q、k 和 v",
    ),
    (
        "only the \"mla\" variant reads this weight: add \"mla\" to [run].variants with [shape].kv_rank and rope_dim, or remove it",
        "只有 \"mla\" 变体读取这个权重：把 \"mla\" 加入 [run].variants 并给出 [shape].kv_rank 和 rope_dim，或删除它",
    ),
    (
        "query projection q = x·W_q, each head [q_nope | q_pe]",
        "查询投影 q = x·W_q，每个头为 [q_nope | q_pe]",
    ),
    (
        "rotary key k_pe = x·W_kr, one for every head",
        "旋转键 k_pe = x·W_kr，所有头共用一个",
    ),
    (
        "the absorbed decode is traced with the causal mask: remove [run].window",
        "吸收式解码按因果掩码追踪：请删除 [run].window",
    ),
    (
        "the absorbed decode reads its own latent cache, one row per token: remove [paged] and [run].split_kv",
        "吸收式解码读取它自己的潜缓存，每个 token 一行：请删除 [paged] 和 [run].split_kv",
    ),
    (
        "the mistakes are written into the plain kernels, not multi-head latent attention: remove [run].mistakes",
        "这些错误写在普通内核里，而不是多头潜注意力里：请删除 [run].mistakes",
    ),
    (
        "rope turns the rotary channels of q_pe and k_pe in pairs, so rope_dim must be even; it is {dr}",
        "rope 成对旋转 q_pe 和 k_pe 的旋转通道，所以 rope_dim 必须是偶数；现在是 {dr}",
    ),
    (
        "values up from the latent, v = c_kv·W_uv",
        "从潜变量向上投影出值，v = c_kv·W_uv",
    ),
    (
        "q[i] = x[i]·W_q = [q_nope_h | q_pe_h] per head",
        "q[i] = x[i]·W_q = 每个头的 [q_nope_h | q_pe_h]",
    ),
    (
        "c_kv[j] = x[j]·W_dkv   (R channels for every head)",
        "c_kv[j] = x[j]·W_dkv   （所有头共用 R 个通道）",
    ),
    (
        "k_pe[j] = x[j]·W_kr   (DR channels, one rotary key for every head)",
        "k_pe[j] = x[j]·W_kr   （DR 个通道，所有头共用一个旋转键）",
    ),
    (
        "q[t] = x[t]·W_q = [q_nope_h | q_pe_h] per head",
        "q[t] = x[t]·W_q = 每个头的 [q_nope_h | q_pe_h]",
    ),
    (
        "q_lat_h[t] = q_nope_h[t]·W_uk,hᵀ   (so q_lat·c_kv = q_nope·k_nope)",
        "q_lat_h[t] = q_nope_h[t]·W_uk,hᵀ   （于是 q_lat·c_kv = q_nope·k_nope）",
    ),
    (
        "dk_pe[j] = Σ_h Σ_i dS_h[i,j] q_pe_h[i] / √(D + DR)   (one rotary key for every head)",
        "dk_pe[j] = Σ_h Σ_i dS_h[i,j] q_pe_h[i] / √(D + DR)   （所有头共用一个旋转键）",
    ),
    // explain of multi-head latent attention's absorbed decode (explain/plain/mla_decode.rs)
    (
        "a decode run is forward only and has no backward pass to explain; remove [run].decode to see the gradients of the full-sequence run",
        "解码运行只有前向，没有可讲解的反向；删除 [run].decode 即可查看整段序列运行的梯度",
    ),
    (
        "decoded token by token from the latent cache, absorbed form",
        "借助潜缓存逐个 token 解码，吸收形式",
    ),
    (
        "Before the scores: the latent cache at step t={i}",
        "分数之前：第 t={i} 步时的潜缓存",
    ),
    (
        "step t projects token t once into one cache row of R + DR = {R} + {DR} = {n} numbers:",
        "第 t 步把 token t 投影一次，写成一行 R + DR = {R} + {DR} = {n} 个数的缓存：",
    ),
    (
        "columns r < R hold c_kv = x[t]·w_dkv, columns r ≥ R hold k_pe = x[t]·w_kr (decode_latent);",
        "列 r < R 存 c_kv = x[t]·w_dkv，列 r ≥ R 存 k_pe = x[t]·w_kr（decode_latent）；",
    ),
    (
        "the row serves all H = {H} heads, where MHA caches 2·H·D = 2·{H}·{D} = {n} numbers a token",
        "这一行供所有 H = {H} 个头共用，而 MHA 每个 token 要缓存 2·H·D = 2·{H}·{D} = {n} 个数",
    ),
    (
        "{what}{step}: step {step} wrote kv_cache.data[{lo}..={hi}] (events #{first} to #{last})",
        "{what}{step}：第 {step} 步写入了 kv_cache.data[{lo}..={hi}]（事件 #{first} 到 #{last}）",
    ),
    (
        "key j={j} is the query's own token: step {i} reads the row it has just written",
        "键 j={j} 就是查询自己的 token：第 {i} 步读取它刚刚写入的那一行",
    ),
    (
        "each column is a sum over x's C channels; the first c_kv and k_pe columns of key j={j}:",
        "每一列都是对 x 的 C 个通道求和；键 j={j} 的第一个 c_kv 列和第一个 k_pe 列：",
    ),
    (
        "Before the scores: query i={i} absorbs w_uk into the latent space (decode_absorb)",
        "分数之前：查询 i={i} 吸收 w_uk，进入潜空间（decode_absorb）",
    ),
    (
        "head h's q_nope times w_ukᵀ, once per step and not once per key:",
        "头 h 的 q_nope 乘以 w_ukᵀ，每步一次，而不是每个键一次：",
    ),
    (
        "as k_nope[j] = c_kv[j]·w_uk, q_nope·k_nope[j] = Σ_d q_nope[d]·Σ_r c_kv[j,r]·w_uk[r, h·D + d]",
        "由于 k_nope[j] = c_kv[j]·w_uk，q_nope·k_nope[j] = Σ_d q_nope[d]·Σ_r c_kv[j,r]·w_uk[r, h·D + d]",
    ),
    (
        "= Σ_r q_lat[r]·c_kv[j,r] = q_lat·c_kv[j]: the score reads c_kv straight from the cache,",
        "= Σ_r q_lat[r]·c_kv[j,r] = q_lat·c_kv[j]：分数直接从缓存读取 c_kv，",
    ),
    (
        "and k_nope, H·D numbers a token, is never made",
        "而 k_nope（每个 token H·D 个数）从不生成",
    ),
    (
        "the score sums R + DR = {R} + {DR} = {n} products: q_lat against the cached c_kv in channels r < R,",
        "分数是 R + DR = {R} + {DR} = {n} 个乘积之和：通道 r < R 是 q_lat 乘缓存的 c_kv，",
    ),
    (
        "then q_pe (query channels d ≥ D) against the cached k_pe in column r = R + d − D of the row:",
        "然后是 q_pe（查询的通道 d ≥ D）乘缓存的 k_pe，即该行的第 r = R + d − D 列：",
    ),
    ("d={d} reads column {line} of the row", "d={d} 读取该行的列 {line}"),
    (
        "4. Weighted sum in the latent space for query i={i} (decode_latent_sum)",
        "4. 查询 i={i} 在潜空间中的加权求和（decode_latent_sum）",
    ),
    (
        "the probabilities weigh the cached c_kv rows themselves: no value row v[j] is made",
        "概率直接给缓存的 c_kv 行加权：不生成任何值行 v[j]",
    ),
    (
        "[bracketed]: this element's term, probs.data[{off}] = {p} times kv_cache.data[{kv_base} + r],",
        "[方括号]：这个元素的那一项，probs.data[{off}] = {p} 乘以 kv_cache.data[{kv_base} + r]，",
    ),
    (
        "column r of key j={j}'s row c_kv[{j}]: P[i,j] enters every latent channel",
        "即键 j={j} 的行 c_kv[{j}] 的第 r 列：P[i,j] 进入每一个潜通道",
    ),
    (
        "5. Up to the values by w_uv for query i={i} (decode_up)",
        "5. 查询 i={i} 经 w_uv 向上投影到值（decode_up）",
    ),
    (
        "since v[j] = c_kv[j]·w_uv, Σ_j P·v[j] = (Σ_j P·c_kv[j])·w_uv = o_lat·w_uv:",
        "由于 v[j] = c_kv[j]·w_uv，Σ_j P·v[j] = (Σ_j P·c_kv[j])·w_uv = o_lat·w_uv：",
    ),
    (
        "the training form's att, with its sums taken in another order",
        "就是训练形式的 att，只是求和的顺序不同",
    ),
    (
        "this element's share of each channel, its terms of o_lat taken up by w_uv,",
        "这个元素在每个通道中的份额，即它在 o_lat 中的各项经 w_uv 向上投影，",
    ),
    (
        "P × Σ_r c_kv[j,r]·w_uv[r*H*D + h*D + d] = P·v[j,d], a value v[j] that is never made:",
        "P × Σ_r c_kv[j,r]·w_uv[r*H*D + h*D + d] = P·v[j,d]，而值 v[j] 从不生成：",
    ),
    (
        "after every head's visible pairs: {total}",
        "累加完所有头的所有可见位置对之后：{total}",
    ),
    (
        "MLA with this scenario's R = {r}, DR = {dr}: one latent row and one rotary key shared by every head, so its cache does not grow with H",
        "MLA 取本场景的 R = {r}、DR = {dr}：所有头共用一行潜变量和一个旋转键，所以它的缓存不随 H 增长",
    ),
    (
        "θ_m = base^(−2m/DR), for q_pe and for k_pe; q_nope and c_kv keep no position",
        "θ_m = base^(−2m/DR)，用于 q_pe 和 k_pe；q_nope 和 c_kv 不带位置",
    ),
    (
        "the turn by −tθ_m, for dQ_pe and for dk_pe",
        "按 −tθ_m 转回，用于 dQ_pe 和 dk_pe",
    ),
    (
        "only the rotary part turns: the query head's channels D..D + DR (q_pe) and the key's k_pe; q_nope and c_kv keep no position",
        "只有旋转部分会转动：查询头的通道 D..D + DR（q_pe）和键的 k_pe；q_nope 和 c_kv 不带位置",
    ),
    (
        "    then turned by rope at step {j} into {value} (the rotation below)",
        "    随后在第 {j} 步被 rope 转成 {value}（见下面的旋转）",
    ),
    ("Step through grouped-query attention", "逐步查看分组查询注意力"),
    ("Step through FlashAttention", "逐步查看 FlashAttention"),
    ("Step through multi-head latent attention", "逐步查看多头潜注意力"),
    (
        "H query heads sharing H_kv key/value heads: head h reads kv head h/(H/H_kv).",
        "H 个查询头共用 H_kv 个键/值头：第 h 个头读取第 h/(H/H_kv) 个键值头。",
    ),
    (
        "MHA computed tile by tile with the online softmax: no [B,H,T,T] buffer at all.",
        "用在线 softmax 逐块计算的 MHA：完全没有 [B,H,T,T] 缓冲区。",
    ),
    (
        "Every head's keys and values projected up from one latent row per token, and a rotary key part the heads share.",
        "每个头的键和值都从每个 token 的一行潜变量向上投影，外加所有头共用的旋转键部分。",
    ),
    (
        "  ✗ not this cell: for {feeds} the reference reads {cell}",
        "  ✗ 不是这个单元格：为了 {feeds}，参考实现读取的是 {cell}",
    ),
    ("  another cell: {cell}", "  另一个单元格：{cell}"),
    ("reference #{n} (layer {l}) ", "参考实现 #{n}（第 {l} 层） "),
    (
        "✗ {name}: {bad} of {n} cells right only by luck, computed from cells the reference does not read for them; first {name}[{index}] from {read}",
        "✗ {name}：{n} 个单元格中有 {bad} 个只是碰巧正确，它们是由参考实现不会为它们读取的单元格算出的；第一个是 {name}[{index}]，来自 {read}",
    ),
    (
        " (not graded: {n} more at pairs the mask hides, which no result depends on)",
        "（不评判：另有 {n} 个位于被掩码隐藏的位置对上，没有任何结果依赖它们）",
    ),
    (
        "✗ {op} of {name}[{offset}] at {at}: no view of its binding is there ({name} holds {holds}){times}",
        "✗ 在 {at} 对 {name}[{offset}] 的 {op}：它的绑定在那里没有任何视图（{name} 存放的是 {holds}）{times}",
    ),
    (
        "✗ read of {name}[{offset}]{cell} before anything wrote it (nobody gives {name}: it starts empty) at {at}{times}",
        "✗ 在任何写入之前读取了 {name}[{offset}]{cell}（没有人提供 {name}：它一开始是空的），在 {at}{times}",
    ),
    (
        "✗ never reads {name}: your results cannot depend on it",
        "✗ 从不读取 {name}：你的结果不可能依赖它",
    ),
    (
        "✗ never reads {n} cells of {name} the results depend on (first {first}): your results cannot depend on them",
        "✗ 从不读取 {name} 中结果所依赖的 {n} 个单元格（第一个是 {first}）：你的结果不可能依赖它们",
    ),
    ("Hint: {h}", "提示：{h}"),
    ("layer {l}'s event #{n}", "第 {l} 层的事件 #{n}"),
    ("event #{n}", "事件 #{n}"),
    (
        "First divergence: the reference's {event} ({file}:{line}) writes {name}[{index}] = {value}",
        "第一个分歧：参考实现的{event}（{file}:{line}）写入 {name}[{index}] = {value}",
    ),
    ("as {name}[{offset}]", "作为 {name}[{offset}]"),
    (
        "yours: {value}{wrote} at {file}:{line} (trace line {tl})",
        "你的：{value}{wrote}，在 {file}:{line}（追踪第 {tl} 行）",
    ),
    (
        "Your value is right, but from {read}, a cell the reference does not read for {name}[{index}] ({expected}): right only by luck",
        "你的值是对的，但它来自 {read}，参考实现不会为 {name}[{index}] 读取这个单元格（{expected}）：只是碰巧正确",
    ),
    (
        "yours: never written (your other writes of {name} are at {file}:{line})",
        "你的：从未写入（你对 {name} 的其他写入在 {file}:{line}）",
    ),
    (
        "Step through it: attn-trace tui {scenario} --mine {trace}{bind}",
        "逐步查看：attn-trace tui {scenario} --mine {trace}{bind}",
    ),
    (
        "your {name} are {factor}× the reference's: {meaning}",
        "你的 {name} 是参考实现的 {factor} 倍：{meaning}",
    ),
    (
        "your {name} are {factor}× the reference's",
        "你的 {name} 是参考实现的 {factor} 倍",
    ),
    ("no scale at all", "完全没有缩放"),
    ("{name} where {meant} is meant", "用了 {name}，应该是 {meant}"),
    ("{part}'s head {h}, channel {d}", "{part} 的头 {h}、通道 {d}"),
    (
        "{mine} is {ours}; the reference reads {theirs} there, {their_column}",
        "{mine} 是 {ours}；参考实现在这里读的是 {theirs}，即 {their_column}",
    ),
    (
        "{cell} is read though it is {hidden}: yours is {mine}, written at {file}:{line}, where the reference's is {value}, which gives it no weight",
        "{cell} 被读取了，但它{hidden}：你的是 {mine}，写在 {file}:{line}，而参考实现的是 {value}，这样它才不占任何权重",
    ),
    (
        "your {read} reads are the same for every {x} of {written} ({y} = {v} each time)",
        "对 {written} 的每个 {x}，你读取的 {read} 都一样（每次都是 {y} = {v}）",
    ),
    (
        "{name}[{offset}] is in no view of its binding",
        "{name}[{offset}] 不在它的绑定的任何视图中",
    ),
    (
        "the {layers} layers' traces would record {events} events, more than grading can hold; use fewer layers ([shape].L) or smaller sizes",
        "{layers} 层的追踪会记录 {events} 个事件，超出了评判能容纳的数量；请减少层数（[shape].L）或使用更小的尺寸",
    ),
    ("hidden: j > i", "被隐藏：j > i"),
    (
        "hidden: key {j} has left query {i}'s window of {w}",
        "被隐藏：键 {j} 已经离开查询 {i} 的大小为 {w} 的窗口",
    ),
    ("hidden by the mask", "被掩码隐藏"),
    ("\"{text}\": unexpected \"{t}\"", "\"{text}\"：意外的 \"{t}\""),
    (
        "unknown size \"{name}\"; the sizes are {names}",
        "未知的尺寸 \"{name}\"；尺寸有 {names}",
    ),
    ("the value overflows", "数值溢出"),
    ("\"{text}\": {n} is too large", "\"{text}\"：{n} 太大了"),
    (
        "\"{text}\": \"{c}\" is not part of an expression (whole numbers, sizes such as C or H_kv, + - * and parentheses)",
        "\"{text}\"：\"{c}\" 不能出现在表达式中（表达式由整数、C 或 H_kv 这样的尺寸、+ - * 和括号组成）",
    ),
    ("an empty expression", "空的表达式"),
    ("a \"(\" is never closed", "有一个 \"(\" 没有闭合"),
    ("unexpected \"{t}\"", "意外的 \"{t}\""),
    ("the expression ends too early", "表达式过早结束"),
    (
        "{what}: expected a whole number, found {n}",
        "{what}：应为整数，实际是 {n}",
    ),
    (
        "{what}: expected a whole number or an expression such as \"3*C\", found {other}",
        "{what}：应为整数或 \"3*C\" 这样的表达式，实际是 {other}",
    ),
    (
        "{buffer}: expected a view {{\"tensor\":…,\"offset\":…,\"strides\":{{…}}}} or a tensor's name, found {other}",
        "{buffer}：应为一个视图 {{\"tensor\":…,\"offset\":…,\"strides\":{{…}}}} 或一个张量名，实际是 {other}",
    ),
    (
        "{buffer}: unknown key \"{key}\" in a view; a view has tensor, offset, strides and slice",
        "{buffer}：视图中有未知的键 \"{key}\"；视图的键是 tensor、offset、strides 和 slice",
    ),
    (
        "{buffer}: a view needs \"tensor\", the reference tensor's name",
        "{buffer}：视图需要 \"tensor\"，即参考张量的名字",
    ),
    (
        "{buffer} → {tensor}: \"strides\" must be an object {{\"dimension\": stride, …}}, found {other}",
        "{buffer} → {tensor}：\"strides\" 必须是一个对象 {{\"维度\": 步长, …}}，实际是 {other}",
    ),
    ("{what}: expected [from, to]", "{what}：应为 [起点, 终点]"),
    (
        "{buffer} → {tensor}: \"slice\" must be an object {{\"dimension\": [from, to], …}}, found {other}",
        "{buffer} → {tensor}：\"slice\" 必须是一个对象 {{\"维度\": [起点, 终点], …}}，实际是 {other}",
    ),
    ("a bindings file", "绑定文件"),
    (
        "expected an object {{\"your buffer\": view or [views], …}}, found {v}",
        "应为一个对象 {{\"你的缓冲区\": 视图或 [视图列表], …}}，实际是 {v}",
    ),
    ("expected a whole number", "应为整数"),
    (
        "expected a whole number or an expression such as \"3*C\"",
        "应为整数或 \"3*C\" 这样的表达式",
    ),
    (
        "expected a view { offset = …, strides = { … } }; a rename such as att = \"probs\" goes above the first [table], where it is not one of its keys",
        "应为一个视图 { offset = …, strides = { … } }；att = \"probs\" 这样的改名要写在第一个 [表] 之前，在那里它才不会成为该表的键",
    ),
    (
        "expected a view { offset = …, strides = { … } }, or {} for the tensor's own layout",
        "应为一个视图 { offset = …, strides = { … } }，或者用 {} 表示张量自己的布局",
    ),
    ("expected { dimension = stride, … }", "应为 { 维度 = 步长, … }"),
    (
        "expected { dimension = [from, to], … }",
        "应为 { 维度 = [起点, 终点], … }",
    ),
    ("expected [from, to]", "应为 [起点, 终点]"),
    (
        "unknown key \"{other}\"; a view has offset, strides and slice",
        "未知的键 \"{other}\"；视图的键是 offset、strides 和 slice",
    ),
    (
        "names no tensor; give one view per reference tensor, e.g. q = { offset = 0, strides = { … } }",
        "没有指明任何张量；请为每个参考张量给出一个视图，例如 q = { offset = 0, strides = { … } }",
    ),
    (
        "expected a table of views [{name}] or a tensor's name (a rename)",
        "应为一个视图表 [{name}]，或一个张量名（改名）",
    ),
    ("{name} is bound twice", "{name} 被绑定了两次"),
    (
        "\"buffer\": {name} is bound to {tensors}, which the {variant} {pass} pass has not ({origin})",
        "\"buffer\"：{name} 被绑定到 {tensors}，但 {variant} {pass} 阶段没有它们（{origin}）",
    ),
    (
        "\"{name}\" is reused along {dim} (a stride of 0 in its binding), but no \"at\" line has said which {dim} it holds: record {{\"op\":\"at\",\"index\":{{\"{dim}\":…}}}} before its accesses",
        "\"{name}\" 沿 {dim} 被重复使用（它的绑定里步长为 0），但还没有任何 \"at\" 行说明它存放的是哪个 {dim}：请在访问它之前记录 {{\"op\":\"at\",\"index\":{{\"{dim}\":…}}}}",
    ),
    (
        "\"{name}\": the last \"at\" line says {dim} = {x}, outside {dim}'s {size} indices",
        "\"{name}\"：最近的 \"at\" 行说 {dim} = {x}，超出了 {dim} 的 {size} 个下标",
    ),
    (
        "\"buffer\": \"{name}\" is neither one of ours nor bound; bind it to the reference's tensors (grade --bind FILE, or \"bind\" in the header: docs/your_kernel.md), or name it as in the inputs file (x, q, k, v, scores, probs, att, out, d_q, …)",
        "\"buffer\"：\"{name}\" 既不是我们的缓冲区，也没有绑定；请把它绑定到参考张量上（grade --bind FILE，或在头部写 \"bind\"：见 docs/your_kernel.zh-CN.md），或者按输入文件中的名字命名（x、q、k、v、scores、probs、att、out、d_q……）",
    ),
    (
        "{what} is {v}: offsets and strides are never negative",
        "{what} 是 {v}：偏移和步长不能为负",
    ),
    (
        "no tensor \"{tensor}\" in the {variant} {pass} pass; its tensors are {names}",
        "{variant} {pass} 阶段没有张量 \"{tensor}\"；它的张量有 {names}",
    ),
    (
        "{name} has no dimension \"{dname}\" to slice; its dimensions are {dims}",
        "{name} 没有可切片的维度 \"{dname}\"；它的维度是 {dims}",
    ),
    (
        "{name}: the slice {dname} ∈ [{a}, {b}) is not within its {size} indices",
        "{name}：切片 {dname} ∈ [{a}, {b}) 不在它的 {size} 个下标之内",
    ),
    (
        "{name} has no dimension \"{dname}\"; its dimensions are {dims} (l: the layer)",
        "{name} 没有维度 \"{dname}\"；它的维度是 {dims}（l：层）",
    ),
    (
        "{name}: no stride for its dimension {dname} ({n} indices); give one (0 reuses the buffer along it, as a scratch row)",
        "{name}：它的维度 {dname}（{n} 个下标）没有步长；请给出一个（0 表示沿这个维度重复使用缓冲区，即临时行）",
    ),
    (
        "{name}: the view's largest offset, {largest}, is beyond any buffer",
        "{name}：视图的最大偏移 {largest} 超出了任何缓冲区",
    ),
    (
        "{name}: the views hold more cells than the run's tensors have ({limit})",
        "{name}：这些视图包含的单元格比本次运行的张量还多（{limit}）",
    ),
    (
        "{name}: {dim} is reused (stride 0) and sliced; reuse the whole dimension or give it a stride",
        "{name}：{dim} 既被重复使用（步长 0）又被切片；要么重复使用整个维度，要么给它一个步长",
    ),
    (
        "{a} and {b} are both at offset {offset}: two cells of one buffer cannot share a place (reuse a buffer with a stride of 0)",
        "{a} 和 {b} 都在偏移 {offset}：同一个缓冲区的两个单元格不能共用一个位置（要重复使用缓冲区，请用步长 0）",
    ),
    (
        "\"op\": expected \"read\", \"write\" or \"at\", found \"{other}\"",
        "\"op\"：应为 \"read\"、\"write\" 或 \"at\"，实际是 \"{other}\"",
    ),
    ("\"buffer\": an empty name", "\"buffer\"：名字为空"),
    (
        "\"index\": an \"at\" line needs \"index\": {\"dimension\": index, …}",
        "\"index\"：\"at\" 行需要 \"index\": {\"维度\": 下标, …}",
    ),
    (
        "\"index\": {dim}: expected a whole number, found {v}",
        "\"index\"：{dim}：应为整数，实际是 {v}",
    ),
    (
        "the scenario's linear layers have no biases ([run].bias = false): remove {name}, or the bias line",
        "场景的线性层没有偏置（[run].bias = false）：请删去 {name}，或删去 bias 这一行",
    ),
    ("a number of layers from 1 to {max}", "1 到 {max} 之间的层数"),
    (
        "the {name} you never write are those of a query with its own key (j = i): the loop over the keys stops one short",
        "你从未写入的 {name} 正是查询与它自己的键配对的那些（j = i）：对键的循环少走了一步",
    ),
    // issue 54: bounded reads, the learner's program, one exit-code rule
    (
        "the line is longer than {max} bytes, the most a trace's line may be (an access takes about 100)",
        "这一行超过 {max} 字节，这是追踪中一行的上限（一次访问大约 100 字节）",
    ),
    (
        "\"{key}\": not a field of the header; its fields are {fields}",
        "\"{key}\"：不是头部行的字段；头部行的字段是 {fields}",
    ),
    (
        "\"{name}\": expected a string, found {found}",
        "\"{name}\"：应为字符串，实际是 {found}",
    ),
    (
        "\"scenario\": longer than {max} bytes, the most a path may be",
        "\"scenario\"：超过 {max} 字节，这是路径的上限",
    ),
    (
        "\"input\": expected a whole number, found {found}",
        "\"input\"：应为非负整数，实际是 {found}",
    ),
    (
        "\"dims\": missing; the header gives the sizes the recorder saw ({all}), as the inputs file's dim lines do",
        "\"dims\"：缺失；头部行要给出记录器看到的尺寸（{all}），和输入文件的 dim 行一样",
    ),
    (
        "\"dims\": expected an object of sizes ({all}), found {found}",
        "\"dims\"：应为尺寸组成的对象（{all}），实际是 {found}",
    ),
    (
        "\"dims\": unknown size \"{name}\"; the sizes are {all}",
        "\"dims\"：未知的尺寸 \"{name}\"；尺寸有 {all}",
    ),
    (
        "\"dims\": no {name}; the header gives every size: {all}",
        "\"dims\"：没有 {name}；头部行要给出每个尺寸：{all}",
    ),
    (
        "\"dims\": {name} must be a whole number, found {found}",
        "\"dims\"：{name} 必须是非负整数，实际是 {found}",
    ),
    (
        "\"file\": longer than {max} bytes, the most a path may be",
        "\"file\"：超过 {max} 字节，这是路径的上限",
    ),
    (
        "\"file\": one source file more than the {max} a trace may name (a kernel's accesses come from a few files)",
        "\"file\"：比一份追踪最多能提到的 {max} 个源文件多了一个（内核的访问只来自少数几个文件）",
    ),
    // the learner's buffer names and the "at" lines' dimensions, bounded like the source files
    (
        "\"buffer\": longer than {max} bytes, the most a name may be",
        "\"buffer\"：超过 {max} 字节，这是名字的上限",
    ),
    (
        "\"buffer\": one buffer more than the {max} a trace may name (a kernel has a few dozen at most)",
        "\"buffer\"：比一份追踪最多能提到的 {max} 个缓冲区多了一个（一个内核最多也就几十个）",
    ),
    (
        "\"index\": a dimension's name longer than {max} bytes, the most a name may be",
        "\"index\"：维度的名字超过 {max} 字节，这是名字的上限",
    ),
    (
        "\"index\": one dimension more than the {max} the \"at\" lines may name (a scratch row is reused along one or two)",
        "\"index\"：比 \"at\" 行最多能提到的 {max} 个维度多了一个（一个临时行只沿一两个维度重复使用）",
    ),
    (
        "\"{field}\": {number} is beyond the range of a float; write \"inf\" or \"-inf\" for an infinite value",
        "\"{field}\"：{number} 超出了浮点数的范围；无穷大的值请写 \"inf\" 或 \"-inf\"",
    ),
    (
        "a number beyond the range of a float (column {column}); write \"inf\" or \"-inf\" for an infinite value",
        "一个超出浮点数范围的数（第 {column} 列）；无穷大的值请写 \"inf\" 或 \"-inf\"",
    ),
    (
        "{file}: --pass backward: decode generates token by token, forward only; there is no backward pass",
        "{file}：--pass backward：解码逐个词元生成，只有前向；没有反向阶段",
    ),
    (
        "{flag} applies to a program run by grade SCENARIO -- COMMAND; a trace file is graded once: remove {flag}",
        "{flag} 用于 grade SCENARIO -- COMMAND 运行的程序；追踪文件只评判一次：请去掉 {flag}",
    ),
    ("the trace could not be read in time", "没能及时读完追踪"),
    (
        "first {name}[{index}] = {mine} as the reference's, but computed from {read}, which the reference does not read for it",
        "第一个 {name}[{index}] = {mine}，与参考实现相同，但它是由 {read} 算出的，参考实现算它时并不读这些",
    ),
    ("out of time", "时间已到"),
    (
        "wrote a trace too long to read within {secs} s (--timeout)",
        "写出的追踪太长，无法在 {secs} 秒（--timeout）内读完",
    ),
    (
        "the temporary folder {folder} is full ({free} free), so your program could not run there; free some space or set TMPDIR to a folder with room",
        "临时文件夹 {folder} 已满（剩余 {free}），你的程序无法在那里运行；请腾出空间，或把 TMPDIR 设为有空间的文件夹",
    ),
    (
        "left something that is not a file at $ATTN_TRACE_OUT: it {what}",
        "在 $ATTN_TRACE_OUT 处留下了不是文件的东西：它{what}",
    ),
    ("wrote a trace that cannot be read: {why}", "写出的追踪无法读取：{why}"),
    ("cannot remove the temporary directory: {e}", "无法删除临时目录：{e}"),
    ("other lines (the first {site})", "其他行（第一处在 {site}）"),
    (
        "{e}; the whole new file is kept in {kept}",
        "{e}；完整的新文件保存在 {kept}",
    ),
    (
        "multi-head latent attention projects through its own w_q, w_dkv, w_kr, w_uk and w_uv, not the separate q, k and v projections: remove [run].qkv",
        "多头潜在注意力通过它自己的 w_q、w_dkv、w_kr、w_uk 和 w_uv 投影，而不是分开的 q、k、v 投影：请删除 [run].qkv",
    ),
];
