//! The zh-CN catalog: every learner-facing message, keyed by its English text, in the terms the
//! zh-CN docs use (注意力, 分数, 概率, 查询, 键, 值, 头, 阶段, 事件, 单元格, 掩码, 梯度 …). Names that
//! the code and the docs keep in English in both languages (buffer and phase names such as `scores`
//! or `d_q`, `tracer`, `baseline`, `MHA`) stay as they are.

/// (English, 简体中文), each pair with the same `{name}` placeholders.
pub static MESSAGES: &[(&str, &str)] = &[
    ("  global", "  全局"),
    ("  tile-local (on chip)", "  tile 本地（片上）"),
    (" (did you mean '{s}'?)", "（是不是想写 '{s}'？）"),
    (" (did you mean {s}?)", "（是不是想写 {s}？）"),
    (" and ", " 和 "),
    (
        " · tile rows {name} {first}..={last}",
        " · tile 所在行 {name} {first}..={last}",
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
        "--temp must be a number ≥ 0, got {temp}",
        "--temp 必须是 ≥ 0 的数，实际是 {temp}",
    ),
    ("0 (the baseline has a single head)", "0（baseline 只有一个头）"),
    ("0 (the only index, since {dim} = 1)", "0（唯一的下标，因为 {dim} = 1）"),
    (
        "C = {c} is not divisible by H = {h}: every head needs D = C/H whole channels",
        "C = {c} 不能被 H = {h} 整除：每个头需要 D = C/H 个完整的通道",
    ),
    (
        "D_i = Σ_d dO[i,d]·O[i,d]   (O = att, dO = d_att)",
        "D_i = Σ_d dO[i,d]·O[i,d]   （O = att，dO = d_att）",
    ),
    (
        "K_tile, V_tile ← k, v rows j0..j1 (global → tile)",
        "K_tile、V_tile ← k、v 的第 j0..j1 行（全局 → tile）",
    ),
    (
        "K_tile, V_tile ← k, v rows j0..j1 (global → tile);  dK_tile = dV_tile = 0",
        "K_tile、V_tile ← k、v 的第 j0..j1 行（全局 → tile）；dK_tile = dV_tile = 0",
    ),
    (
        "P_tile = e^(Q_tile·K_tileᵀ/√D − lse)   (recomputed, never stored)",
        "P_tile = e^(Q_tile·K_tileᵀ/√D − lse)   （重新计算，从不保存）",
    ),
    (
        "Q_tile ← q rows i0..i1 (global → tile);  m = −∞, l = 0, acc = 0",
        "Q_tile ← q 的第 i0..i1 行（全局 → tile）；m = −∞，l = 0，acc = 0",
    ),
    (
        "Q_tile, dO_tile ← q, d_att rows i0..i1 (global → tile)",
        "Q_tile、dO_tile ← q、d_att 的第 i0..i1 行（全局 → tile）",
    ),
    (
        "a SCENARIO (or --sweep) is required",
        "需要一个 SCENARIO（或者 --sweep）",
    ),
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
        "att = acc / l   lse = m + ln l   (written once per query tile)",
        "att = acc / l   lse = m + ln l   （每个查询 tile 只写一次）",
    ),
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
        "dK, dV ← dK_tile, dV_tile   (once per key tile)",
        "dK、dV ← dK_tile、dV_tile   （每个键 tile 一次）",
    ),
    (
        "dQ += dS_tile·K_tile / √D   (added in global memory)",
        "dQ += dS_tile·K_tile / √D   （直接加到全局内存里）",
    ),
    (
        "dist = \"{dist_name}\" takes no {key}; std goes with \"normal\", scale with \"uniform\" and \"arange\"",
        "dist = \"{dist_name}\" 不接受 {key}；std 配合 \"normal\"，scale 配合 \"uniform\" 和 \"arange\"",
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
    (
        "expected a head size from 1 to 1024, found {d}",
        "应为 1 到 1024 之间的头大小，实际是 {d}",
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
    ("expected none or causal", "应为 none 或 causal"),
    ("expected one of {valid}", "应为以下之一：{valid}"),
    (
        "expected shape [{dims_text}] ({expected} numbers, flat or nested), found {found}",
        "应为形状 [{dims_text}]（{expected} 个数，扁平或嵌套），实际是 {found}",
    ),
    ("expected {expected}", "应为{expected}"),
    ("expected {expected}, found {n} rows", "应为{expected}，实际有 {n} 行"),
    ("expected {what}, found {found}", "应为{what}，实际是 {found}"),
    (
        "flash computes whole sequences tile by tile and has no decoding loop: remove decode or \"flash\" from [run].variants",
        "flash 逐个 tile 地计算整个序列，没有逐个 token 的解码循环：请删掉 decode，或者从 [run].variants 中删掉 \"flash\"",
    ),
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
        "online softmax: m_new = max(m_old, rowmax(S_tile)),  P_tile = e^(S_tile − m_new),",
        "在线 softmax：m_new = max(m_old, rowmax(S_tile))，P_tile = e^(S_tile − m_new)，",
    ),
    (
        "only the backward pass reads d_out; add \"backward\" to [run].passes or remove d_out",
        "只有反向传播读取 d_out；请在 [run].passes 中加上 \"backward\"，或者删除 d_out",
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
        "sets the tile sizes of the flash variant, which this scenario does not run: add \"flash\" to [run].variants or remove [flash]",
        "设定的是 flash 变体的 tile 大小，而这个场景不运行 flash：请把 \"flash\" 加入 [run].variants，或者删掉 [flash]",
    ),
    (
        "the TUI needs a terminal on standard input and output; for scripts use attn-trace run, explain or trace (attn-trace --help)",
        "TUI 需要在标准输入和标准输出上连接终端；在脚本里请使用 attn-trace run、explain 或 trace（attn-trace --help）",
    ),
    (
        "the flash variant has no dropout: remove dropout, set mode = \"eval\", or remove \"flash\" from [run].variants",
        "flash 变体不做 dropout：请删掉 dropout、设置 mode = \"eval\"，或者从 [run].variants 中删掉 \"flash\"",
    ),
    (
        "the mistakes are made in the plain kernels and flash has none: remove \"flash\" from [run].variants",
        "这些错误写在朴素内核里，flash 没有：请从 [run].variants 中删掉 \"flash\"",
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
        "unknown variant \"{s}\"; expected baseline, mha, flash or gqa",
        "未知的变体 \"{s}\"；应为 baseline、mha、flash 或 gqa",
    ),
    (
        "unknown {what} \"{name}\"; expected one of {example}",
        "未知的{what} \"{name}\"；应为以下之一：{example}",
    ),
    (
        "use a smaller T (events grow with T²·C), C (and C²·T) or B, or fewer variants or passes",
        "请用更小的 T（事件数随 T²·C 增长）、C（以及 C²·T）或 B，或者更少的变体或遍",
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
        "{flag} belongs to --sweep; a scenario sets its own sizes and mask",
        "{flag} 只能和 --sweep 一起用；场景有自己的尺寸和掩码",
    ),
    ("{kind}, not a regular file", "{kind}，不是普通文件"),
    ("{msg}; see {command} --help", "{msg}；参见 {command} --help"),
    ("{name} (validation split)", "{name}（验证集部分）"),
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
];
