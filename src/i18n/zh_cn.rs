//! The zh-CN catalog: every learner-facing message, keyed by its English text, in the terms the
//! zh-CN docs use (注意力, 分数, 概率, 查询, 键, 值, 头, 阶段, 事件, 单元格, 掩码, 梯度 …). Names that
//! the code and the docs keep in English in both languages (buffer and phase names such as `scores`
//! or `d_q`, `tracer`, `baseline`, `MHA`) stay as they are.

/// (English, 简体中文), each pair with the same `{name}` placeholders.
pub static MESSAGES: &[(&str, &str)] = &[
    (
        "  the shares of query heads h0..h{last}: {heads}",
        "  查询头 h0..h{last} 各自的份额：{heads}",
    ),
    (" (did you mean '{s}'?)", "（是不是想写 '{s}'？）"),
    (" (did you mean {s}?)", "（是不是想写 {s}？）"),
    (" and ", " 和 "),
    (" · {kv} of {h} k/v heads", " · {h} 个头共享 {kv} 个键/值头"),
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
        "--batch must be 1..=4096, got {n}",
        "--batch 必须在 1..=4096 之间，实际是 {n}",
    ),
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
        "--rope {given} 与检查点的 rope {have} 不一致；继续训练时请省略它",
    ),
    (
        "--temp must be a number ≥ 0, got {temp}",
        "--temp 必须是 ≥ 0 的数，实际是 {temp}",
    ),
    ("0 (the baseline has a single head)", "0（baseline 只有一个头）"),
    ("0 (the only index, since {dim} = 1)", "0（唯一的下标，因为 {dim} = 1）"),
    (
        "C = {c} is not divisible by H = {h}: every head needs D = C/H whole channels",
        "C = {c} 不能被 H = {h} 整除：每个头需要 D = C/H 个完整的通道",
    ),
    ("H_kv: divides H (empty: H)", "H_kv：须整除 H（留空：等于 H）"),
    ("a boolean {raw}", "布尔值 {raw}"),
    ("a command is required", "需要一个子命令"),
    ("a data file", "数据文件"),
    ("a date {raw}", "日期 {raw}"),
    ("a float {raw}", "浮点数 {raw}"),
    ("a non-negative integer", "非负整数"),
    ("a positive integer", "正整数"),
    ("a scenario file", "场景文件"),
    ("a string {raw}", "字符串 {raw}"),
    ("a table", "表"),
    (
        "an S×T = {s}×{t} matrix of 0 and 1 (1: the query may see the key)",
        "一个由 0 和 1 组成的 S×T = {s}×{t} 矩阵（1：这个查询可以看到这个键）",
    ),
    ("an argument", "某个参数"),
    ("an array {raw}", "数组 {raw}"),
    (
        "an index in 0..{size} ({dim} = {size})",
        "0..{size} 中的一个下标（{dim} = {size}）",
    ),
    ("an integer {raw}", "整数 {raw}"),
    (
        "belongs to qkv = \"fused\"; with qkv = \"separate\" give w_q, b_q, w_k, b_k, w_v, b_v",
        "属于 qkv = \"fused\"；qkv = \"separate\" 时请给出 w_q、b_q、w_k、b_k、w_v、b_v",
    ),
    (
        "belongs to qkv = \"separate\"; this scenario uses the fused w_qkv (set [run].qkv = \"separate\")",
        "属于 qkv = \"separate\"；这个场景使用融合的 w_qkv（请设置 [run].qkv = \"separate\"）",
    ),
    ("cannot read: {e}", "无法读取：{e}"),
    ("cannot write to standard output: {e}", "无法写入标准输出：{e}"),
    (
        "cross-attention projects x and memory with their own weights: set [run].qkv = \"separate\" (or give q, k and v)",
        "交叉注意力用各自的权重投影 x 和 memory：请设置 [run].qkv = \"separate\"（或者直接给出 q、k 和 v）",
    ),
    (
        "dist = \"{dist_name}\" takes no {key}; std goes with \"normal\", scale with \"uniform\" and \"arange\"",
        "dist = \"{dist_name}\" 不接受 {key}；std 配合 \"normal\"，scale 配合 \"uniform\" 和 \"arange\"",
    ),
    (
        "downstream, d_qkv, d_x and d_w_qkv are wrong too: d_w_qkv differs by up to {diff}",
        "下游的 d_qkv、d_x 和 d_w_qkv 也跟着错了：d_w_qkv 最多相差 {diff}",
    ),
    (
        "duplicate key: each key may be given only once",
        "键重复：每个键只能给出一次",
    ),
    (
        "empty file: a scenario needs at least a title = \"…\" and a [shape] table with B, T and C",
        "空文件：场景至少需要 title = \"…\" 和一个含 B、T、C 的 [shape] 表",
    ),
    ("error", "错误"),
    ("expected 0 or 1, found {found}", "应为 0 或 1，实际是 {found}"),
    ("expected a finite number, found {found}", "应为有限数，实际是 {found}"),
    (
        "expected a finite number, found {found} (beyond the f32 range ±3.4e38)",
        "应为有限数，实际是 {found}（超出 f32 的范围 ±3.4e38）",
    ),
    ("expected a non-empty string", "应为非空字符串"),
    ("expected a non-negative number, found {p}", "应为非负数，实际是 {p}"),
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
    ("expected one of {valid}", "应为以下之一：{valid}"),
    (
        "expected shape [{dims_text}] ({expected} numbers, flat or nested), found {found}",
        "应为形状 [{dims_text}]（{expected} 个数，扁平或嵌套），实际是 {found}",
    ),
    ("expected {expected}", "应为{expected}"),
    ("expected {expected}, found {n} rows", "应为{expected}，实际有 {n} 行"),
    ("expected {what}, found {found}", "应为{what}，实际是 {found}"),
    ("invalid arguments", "参数无效"),
    ("invalid value", "取值无效"),
    ("is a FIFO (named pipe)", "是一个 FIFO（命名管道）"),
    ("is a block device", "是一个块设备"),
    ("is a character device", "是一个字符设备"),
    ("is a directory", "是一个目录"),
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
        "its values first differ at event #{event}: {mistaken} (correct run: {correct})",
        "数值首次不同于事件 #{event}：{mistaken}（正确运行：{correct}）",
    ),
    (
        "loss {loss} nats/byte (perplexity {perplexity}) over {tokens} tokens: {windows} windows of {seq} from {what}",
        "损失 {loss} nats/字节（困惑度 {perplexity}），共 {tokens} 个 token：从 {what} 取 {windows} 个长度为 {seq} 的窗口",
    ),
    ("mask", "掩码"),
    (
        "memory is the key/value input of cross-attention: give [shape].S, the number of queries",
        "memory 是交叉注意力中键和值的输入：请给出 [shape].S，即查询的个数",
    ),
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
    ("mode", "模式"),
    (
        "must be none, interleaved or half, got {name}",
        "必须是 none、interleaved 或 half，收到的是 {name}",
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
    ("no such file", "文件不存在"),
    (
        "not UTF-8 text: byte {byte} cannot start a character; save the file as UTF-8",
        "不是 UTF-8 文本：字节 {byte} 不能作为字符的开头；请把文件保存为 UTF-8",
    ),
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
        "only the backward pass reads d_out; add \"backward\" to [run].passes or remove d_out",
        "只有反向传播读取 d_out；请在 [run].passes 中加上 \"backward\"，或者删除 d_out",
    ),
    (
        "over all {cells} cells of {name}: mistaken − last head's share ≤ {off_last} · correct − sum of the shares ≤ {off_sum}",
        "{name} 的全部 {cells} 个单元：错误值 − 最后一个头的份额 ≤ {off_last} · 正确值 − 各份额之和 ≤ {off_sum}",
    ),
    ("pass", "遍"),
    (
        "pass \"{pass}\" is not among [run].passes",
        "遍 \"{pass}\" 不在 [run].passes 中",
    ),
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
        "query {i} may see no key: softmax of a row of −1e9 is uniform, not zero; give it at least one 1",
        "查询 {i} 看不到任何键：一整行 −1e9 的 softmax 是均匀分布而不是零；请至少给它一个 1",
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
    (
        "the TUI needs a terminal on standard input and output; for scripts use attn-trace run, explain or trace (attn-trace --help)",
        "TUI 需要在标准输入和标准输出上连接终端；在脚本里请使用 attn-trace run、explain 或 trace（attn-trace --help）",
    ),
    (
        "the output projection needs both w_proj and b_proj; missing {missing}",
        "输出投影需要 w_proj 和 b_proj 两者；缺少 {missing}",
    ),
    (
        "the trace would record on the order of {bound} events, far beyond the {budget} GiB budget; {shrink}",
        "trace 将记录约 {bound} 个事件，远超 {budget} GiB 的预算；{shrink}",
    ),
    (
        "the trace would record {events} events (about {gib} GiB at {per_event} bytes per event), over the {budget} GiB budget; {shrink}",
        "trace 将记录 {events} 个事件（按每个事件 {per_event} 字节计约 {gib} GiB），超出 {budget} GiB 的预算；{shrink}",
    ),
    (
        "there is no dropout to seed: set [run].dropout too",
        "没有需要设置种子的 dropout：请同时设置 [run].dropout",
    ),
    (
        "this run makes no backward pass: the mistake is in the gradients",
        "这次运行没有反向传播：这个错误出在梯度里",
    ),
    (
        "turns pairs of channels, so a head needs an even number of them: D = d_model / heads = {c} / {h} = {d}",
        "按通道对旋转，所以每个头的通道数必须是偶数：D = d_model / heads = {c} / {h} = {d}",
    ),
    ("unexpected argument '{arg}'", "意外的参数 '{arg}'"),
    ("unexpected value '{value}' for {arg}", "{arg} 的意外取值 '{value}'"),
    (
        "unknown buffer \"{s}\"; expected one of {names}",
        "未知的缓冲区 \"{s}\"；应为以下之一：{names}",
    ),
    ("unknown command '{name}'", "未知的子命令 '{name}'"),
    (
        "unknown dist \"{name}\"; expected one of {choices}",
        "未知的分布 \"{name}\"；应为以下之一：{choices}",
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
        "unknown pass \"{s}\"; expected forward or backward",
        "未知的遍 \"{s}\"；应为 forward 或 backward",
    ),
    (
        "unknown phase \"{s}\"; expected one of {names}",
        "未知的阶段 \"{s}\"；应为以下之一：{names}",
    ),
    (
        "unknown variant \"{s}\"; expected baseline or mha",
        "未知的变体 \"{s}\"；应为 baseline 或 mha",
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
        "values first differ at #{correct_event} / #{mistaken_event}: correct {correct} · mistaken {mistaken}",
        "数值首次不同于 #{correct_event} / #{mistaken_event}：正确 {correct} · 错误 {mistaken}",
    ),
    ("variant", "变体"),
    (
        "variant \"{var}\" is not among [run].variants",
        "变体 \"{var}\" 不在 [run].variants 中",
    ),
    ("wrote {written} events to {path}", "已把 {written} 个事件写入 {path}"),
    ("{arg} cannot be given more than once", "{arg} 只能给出一次"),
    ("{arg} cannot be used with {prior}", "{arg} 不能和 {prior} 一起使用"),
    ("{arg} needs a value", "{arg} 需要一个值"),
    (
        "{arg} needs its value after an equal sign",
        "{arg} 的值需要写在等号后面",
    ),
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
    (
        "{group} query heads share each key/value head (H = {heads}, H_kv = {kv_heads}): the correct run adds their shares into d_k and d_v, the mistaken run writes each over the last",
        "每个键/值头由 {group} 个查询头共享（H = {heads}，H_kv = {kv_heads}）：正确运行把它们各自的份额累加进 d_k 和 d_v，错误运行让每一份覆盖上一份",
    ),
    ("{kind}, not a regular file", "{kind}，不是普通文件"),
    ("{msg}; see {command} --help", "{msg}；参见 {command} --help"),
    ("{name} (validation split)", "{name}（验证集部分）"),
    (
        "{name}[b0 j0 kv_h0 d0..{d_end}]: correct [{correct}] · mistaken [{mistaken}]",
        "{name}[b0 j0 kv_h0 d0..{d_end}]：正确 [{correct}] · 错误 [{mistaken}]",
    ),
    ("{n} bytes", "{n} 字节"),
    ("{n} numbers", "{n} 个数"),
    ("{n} of the inputs had errors", "{n} 个输入有错误"),
    ("{path}: cannot write there: {e}", "{path}：无法写入那里：{e}"),
    ("{path}: cannot write: {e}", "{path}：无法写入：{e}"),
    (
        "{path}: is a directory; give a file name to write to",
        "{path}：是一个目录；请给出要写入的文件名",
    ),
    (
        "{size} bytes is larger than the {max} {what} may be",
        "{size} 字节超过了{what}允许的 {max}",
    ),
    ("{variant} {n} events", "{variant} {n} 个事件"),
    ("{what} \"{name}\" is listed twice", "{what} \"{name}\" 列出了两次"),
    ("←/→ none · interleaved · half", "←/→ none · interleaved · half"),
];
