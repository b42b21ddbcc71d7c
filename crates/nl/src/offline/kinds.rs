//! The vocabulary of steps: phrases that ask for each kind of subtask,
//! model names and their families, and the English words Chinese verbs
//! and nouns become in step names.

use super::scan::{Token, phrase_at};
use crate::decompose::TaskKind;

/// Phrases that ask for a kind of subtask. Within a segment the earliest
/// match wins, the longest one where several start together ("extract
/// features" is feature engineering, "extract" alone a load).
#[rustfmt::skip]
pub const KINDS: &[(TaskKind, &[&str])] = &[
    (
        TaskKind::DistributedTrain,
        &[
            "distributed training", "distributed", "multi-node", "ddp", "horovod", "分布式训练", "分布式",
            "多机",
        ],
    ),
    (
        TaskKind::QualityCheck,
        &[
            "data quality", "data-quality", "quality check", "quality checks", "data validation",
            "validate the data", "validate the dataset", "validate the schema",
            "schema validation", "sanity check", "schema check", "check the data", "check data",
            "data drift", "detect drift", "check for drift", "profile the data", "data profiling",
            "great expectations", "数据质量", "质量检查", "数据校验", "校验数据", "检查数据", "数据漂移",
        ],
    ),
    (
        TaskKind::Select,
        &[
            "keep whichever", "pick whichever", "whichever", "the better one", "the one with the",
            "选出", "挑出", "挑选", "最小的", "最大的", "最高的", "最低的", "最好的", "最优的", "最佳的", "轮廓系数最好", "选最好",
            "选最优", "keep the best", "select the best", "pick the best", "choose the best",
            "keep the better", "pick the better", "select the better", "pick the winner",
            "the best model", "the best one", "best-performing", "model selection", "compare",
            "选出最好", "选出最优", "选择最好", "选择最优", "选择最佳", "选出最佳", "挑选最优", "挑选最好", "保留最好", "保留最优",
            "最优模型", "最好的模型", "最佳模型", "比较",
        ],
    ),
    (
        TaskKind::Ensemble,
        &[
            "预测取平均", "预测平均", "取平均", "做集成", "模型集成", "集成学习", "average the outputs", "ensemble",
            "average the models", "average the predictions", "average their predictions",
            "average", "blend", "stack the models", "stacking", "majority vote", "voting", "集成",
            "模型融合", "融合", "平均",
        ],
    ),
    (
        TaskKind::Load,
        &[
            "grab", "load", "fetch", "download", "ingest", "import", "collect", "pull", "read",
            "scrape", "crawl", "extract", "query", "retrieve", "gather", "加载", "读取", "下载",
            "导入", "获取", "采集", "拉取", "收集", "抽取", "爬取", "查询", "读入",
        ],
    ),
    (
        TaskKind::Features,
        &[
            "特征", "compute the features", "feature store", "feature engineering",
            "engineer features", "engineer the features", "extract features",
            "extract the features", "feature extraction", "compute features", "build features",
            "generate features", "feature table", "feature tables", "featurize", "embed", "embeddings", "vectorize",
            "one-hot encode", "encode", "tf-idf", "特征工程", "提取特征", "特征提取", "构造特征", "生成特征", "向量化",
            "编码",
        ],
    ),
    (
        TaskKind::Preprocess,
        &[
            "process", "preprocess", "pre-process", "clean", "cleanse", "clean up", "normalize",
            "normalise", "standardize", "transform", "tokenize", "deduplicate", "dedupe",
            "de-duplicate", "remove duplicates", "drop duplicates", "impute", "prepare the data",
            "prepare the dataset", "prepare", "split", "filter", "join", "merge", "concatenate",
            "aggregate", "augment", "resize", "label", "annotate", "downsample", "upsample",
            "resample", "shuffle", "convert", "parse", "anonymize", "balance", "crop", "wrangle",
            "sanitize", "enrich", "decompress", "unzip", "预处理", "预处里", "清洗", "清理", "归一化", "标准化", "去重",
            "切分", "划分", "合并", "关联", "拼接", "过滤", "筛选", "聚合", "分词", "数据增强", "增强", "标注", "采样", "转换",
            "解析", "脱敏", "整理",
        ],
    ),
    (
        TaskKind::Train,
        &[
            "重新训练", "超参数搜索", "超参搜索", "超参数调优", "hyperparameter optimization",
            "hyperparameter sweep", "train", "retrain", "fit", "fine-tune", "fine tune",
            "finetune", "lora-fine-tune", "sft with", "sft on", "run sft", "do sft", "learn", "pretrain", "pre-train", "distill",
            "tune the hyperparameters", "tune", "sweep", "超参扫", "扫参",
            "hyperparameter tuning", "hyperparameter search", "grid search", "cluster", "训练", "训连",
            "微调", "拟合", "调参", "预训练", "蒸馏", "聚类",
        ],
    ),
    (
        TaskKind::Evaluate,
        &[
            "eval", "evals", "the eval set", "metrics", "compute the metrics", "measure the",
            "error analysis", "evaluate", "assess", "validate", "test", "cross-validate",
            "benchmark", "score", "measure", "compute metrics", "calculate metrics", "backtest",
            "check the accuracy", "集成测试", "单元测试", "see how good", "how good it is", "how well it", "评估", "评古", "测试",
            "验证", "评测", "评价", "回测",
        ],
    ),
    (
        TaskKind::Predict,
        &[
            "predict", "batch inference", "inference", "infer", "run inference", "batch scoring",
            "batch predictions", "score the new", "score new", "generate predictions",
            "make predictions", "apply the model", "推理", "预测", "批量预测", "打分",
        ],
    ),
    (
        TaskKind::Register,
        &[
            "register", "model registry", "save the model", "store the model",
            "publish the model", "upload the model", "push the model to the registry",
            "version the model", "注册", "保存模型", "存储模型", "模型仓库",
        ],
    ),
    (
        TaskKind::Export,
        &[
            "write the scores", "write the predictions", "write the output", "write them",
            "write it", "write back", "write out", "load them into", "load it into", "load into",
            "push them", "export", "write to", "write the results", "write them to",
            "write it to", "save to", "save the results", "save the predictions", "save them",
            "save it to", "upload", "push to", "publish", "persist", "store the results",
            "store them", "dump", "convert to onnx", "to onnx", "导出", "写入", "写回", "上传", "推送",
            "保存到", "存入", "入库", "存到", "存进", "落库",
        ],
    ),
    (
        TaskKind::Deploy,
        &[
            "发布到生产", "发布到线上", "上生产", "生产环境", "to production", "redeploy", "re-deploy",
            "full rollout", "全量发布", "deploy", "serve", "roll out", "rollout", "ship", "release",
            "promote", "canary", "push to production", "部署", "部属", "上线", "发布模型", "发布服务", "灰度",
        ],
    ),
    (
        TaskKind::Report,
        &[
            "日报", "周报", "月报", "报表", "into a report", "a report", "report", "summarize",
            "summarise", "summary", "dashboard", "plot", "visualize", "visualise",
            "publish metrics", "publish the metrics", "log metrics", "log the metrics",
            "track metrics", "push metrics", "chart", "报告", "报表", "汇总", "总结", "可视化", "发布指标",
        ],
    ),
    (
        TaskKind::Notify,
        &[
            "notify", "notification", "alert", "send an alert", "email", "e-mail", "ping",
            "message", "slack", "webhook", "page", "inform", "wecom", "pagerduty", "通知", "告警", "报警",
            "提醒", "邮件", "钉钉", "飞书", "企业微信", "短信", "发消息", "发个消息", "发条消息",
            "发一条消息", "发到群里", "发群里",
        ],
    ),
    (
        TaskKind::Shell,
        &[
            "run the command", "execute", "run the script", "执行命令", "运行命令", "执行脚本",
        ],
    ),
];

/// Model names: canonical name and how people write it.
#[rustfmt::skip]
pub const MODELS: &[(&str, &[&str])] = &[
    (
        "lstm",
        &["lstm", "lstms", "bilstm", "bi-lstm", "长短期记忆"],
    ),
    ("gru", &["gru", "grus"]),
    ("rnn", &["rnn", "rnns", "recurrent", "循环神经网络"]),
    ("svm", &["svm", "support vector machine", "支持向量机"]),
    ("xgboost", &["xgboost", "xgb"]),
    // (LambdaMART: gradient-boosted trees for ranking, as LightGBM's lambdarank.)
    ("lightgbm", &["lightgbm", "lgbm", "lambdamart", "lambdarank"]),
    ("catboost", &["catboost"]),
    (
        "random_forest",
        &[
            "random forest", "随机森林", "isolation forest", "extra trees", "孤立森林",
        ],
    ),
    ("logistic_regression", &["logistic regression", "逻辑回归"]),
    ("linear_regression", &["linear regression", "线性回归"]),
    ("ridge", &["ridge regression", "ridge"]),
    ("lasso", &["lasso regression", "lasso"]),
    (
        "linear",
        &[
            "elastic net", "elasticnet", "linear model", "linear classifier", "线性模型",
        ],
    ),
    (
        "gradient_boosting",
        &[
            "gradient boosting", "gradient-boosted", "gradient boosted", "boosted trees", "gbdt",
            "gbm", "梯度提升",
        ],
    ),
    ("decision_tree", &["decision tree", "决策树"]),
    ("knn", &["knn", "k-nearest neighbors"]),
    ("naive_bayes", &["naive bayes", "朴素贝叶斯"]),
    (
        "kmeans",
        &[
            "k-means", "kmeans", "k means", "clustering", "dbscan", "hdbscan", "gaussian mixture",
            "k均值", "cluster the", "聚类",
        ],
    ),
    (
        "mlp",
        &[
            "mlp", "multilayer perceptron", "feed-forward", "neural network", "neural net",
            "多层感知机", "神经网络",
        ],
    ),
    (
        "vit",
        &[
            "vit", "vision transformer", "vision transformers", "视觉 transformer", "swin", "deit",
        ],
    ),
    (
        "cnn",
        &[
            "cnn", "cnns", "convolutional", "convnet", "efficientnet", "mobilenet", "vgg", "unet",
            "u-net", "yolo", "deeplab", "deeplabv3", "mask r-cnn", "faster r-cnn", "r-cnn", "fcn",
            "卷积神经网络", "卷积",
        ],
    ),
    ("resnet", &["resnet", "resnet50", "resnet-50", "resnet18"]),
    (
        "llm",
        &[
            "large language model", "language model", "llm", "llms", "gpt", "gpt-2", "gpt2",
            "llama", "llama2", "llama-2", "llama3", "llama-3", "mistral", "mixtral", "qwen",
            "qwen2", "chatglm", "baichuan", "gemma", "falcon", "lora", "qlora", "peft", "dpo", "rlhf",
            "orpo", "7 b",
            "8 b", "13 b", "70 b", "大语言模型", "语言模型", "大模型",
        ],
    ),
    (
        "bert",
        &[
            "bert", "roberta", "distilbert", "albert", "electra", "bart", "xlnet", "deberta",
            "whisper", "wav2vec", "t5",
        ],
    ),
    ("transformer", &["transformer", "transformers"]),
];

/// Model names written with a version or size: "yolov8", "resnet101",
/// "mistral-7b", "llama-3-8b", "efficientnet-b0".
pub const MODEL_PREFIXES: &[(&str, &str)] = &[
    ("yolo", "cnn"),
    ("deeplab", "cnn"),
    ("efficientnet", "cnn"),
    ("mobilenet", "cnn"),
    ("convnext", "cnn"),
    ("resnet", "resnet"),
    ("vgg", "cnn"),
    ("unet", "cnn"),
    ("vit-", "vit"),
    ("vit_", "vit"),
    ("swin", "vit"),
    ("deit", "vit"),
    ("llama", "llm"),
    ("mistral", "llm"),
    ("mixtral", "llm"),
    ("qwen", "llm"),
    ("gpt-", "llm"),
    ("gemma", "llm"),
    ("phi-", "llm"),
    ("chatglm", "llm"),
    ("baichuan", "llm"),
    ("deepseek", "llm"),
    ("bert-", "bert"),
    ("roberta", "bert"),
    ("distilbert", "bert"),
    ("bilstm", "lstm"),
    ("xgboost", "xgboost"),
    ("lightgbm", "lightgbm"),
];

/// Model families, as the evaluation names them, and their models.
const FAMILIES: &[(&str, &[&str])] = &[
    ("language_model", &["llm"]),
    ("vision_transformer", &["vit"]),
    ("cnn", &["cnn", "resnet"]),
    ("rnn", &["rnn", "lstm", "gru"]),
    (
        "gbdt",
        &["xgboost", "lightgbm", "catboost", "gradient_boosting"],
    ),
    ("random_forest", &["random_forest", "decision_tree"]),
    (
        "linear",
        &["logistic_regression", "linear_regression", "linear"],
    ),
    ("svm", &["svm"]),
    ("mlp", &["mlp"]),
    ("clustering", &["kmeans"]),
    ("transformer", &["transformer", "bert"]),
];

/// The family of a model name (`xgboost` → `gbdt`).
pub fn family(model: &str) -> Option<&'static str> {
    FAMILIES
        .iter()
        .find(|(_, models)| models.contains(&model))
        .map(|(f, _)| *f)
}

/// Words that say the data is images, when no model is named: an image
/// model is a CNN.
pub const IMAGE_WORDS: &[&str] = &[
    "image", "images", "photos", "pictures", "x-rays", "scans", "图像", "图片", "照片",
];

/// Chinese words and the English words step names use for them, longest
/// first where one contains another.
#[rustfmt::skip]
pub const CJK_WORDS: &[(&str, &str)] = &[
    ("特征工程", "engineer-features"), ("提取特征", "extract-features"), ("特征提取", "extract-features"),
    ("数据质量", "check-data-quality"), ("数据增强", "augment"), ("批量预测", "batch-predict"),
    ("预处理", "preprocess"), ("可视化", "visualize"), ("归一化", "normalize"), ("向量化", "vectorize"),
    ("预训练", "pretrain"), ("加载", "load"), ("读取", "read"), ("下载", "download"), ("导入", "import"),
    ("获取", "fetch"), ("采集", "collect"), ("拉取", "pull"), ("收集", "collect"), ("抽取", "extract"),
    ("提取", "extract"), ("爬取", "crawl"), ("查询", "query"), ("清洗", "clean"), ("清理", "clean"),
    ("标准化", "standardize"), ("去重", "dedupe"), ("切分", "split"), ("划分", "split"), ("合并", "merge"),
    ("关联", "join"), ("连接", "join"), ("拼接", "concat"), ("过滤", "filter"), ("筛选", "filter"),
    ("聚合", "aggregate"), ("分词", "tokenize"), ("增强", "augment"), ("标注", "label"), ("采样", "sample"),
    ("转换", "convert"), ("解析", "parse"), ("脱敏", "anonymize"), ("整理", "tidy"), ("训练", "train"),
    ("微调", "fine-tune"), ("拟合", "fit"), ("调参", "tune"), ("蒸馏", "distill"), ("聚类", "cluster"),
    ("评估", "evaluate"), ("测试", "test"), ("验证", "validate"), ("评测", "evaluate"),
    ("评价", "evaluate"), ("回测", "backtest"), ("选出", "select"), ("选择", "choose"), ("挑选", "pick"),
    ("比较", "compare"), ("注册", "register"), ("保存", "save"), ("存储", "store"), ("部署", "deploy"), ("释放", "free"),
    ("上线", "launch"), ("发布", "publish"), ("报告", "report"), ("报表", "report"), ("汇总", "summarize"),
    ("总结", "summarize"), ("通知", "notify"), ("告警", "alert"), ("报警", "alert"), ("提醒", "remind"),
    ("邮件", "email"), ("导出", "export"), ("写入", "write"), ("上传", "upload"), ("推送", "push"),
    ("推理", "inference"), ("预测", "predict"), ("打分", "score"), ("集成", "ensemble"), ("融合", "blend"),
    ("平均", "average"), ("打印", "print"), ("输出", "output"), ("运行", "run"), ("执行", "run"),
    ("抛", "flip"), ("掷", "toss"), ("压缩", "compress"), ("量化", "quantize"), ("备份", "backup"),
    ("同步", "sync"), ("归档", "archive"), ("索引", "index"), ("检测", "detect"), ("分割", "segment"),
    ("翻译", "translate"), ("生成", "generate"), ("计算", "compute"), ("统计", "count"), ("排序", "sort"),
    ("分类", "classify"), ("监控", "monitor"), ("校验", "validate"), ("检查", "check"), ("扫描", "scan"),
    ("构建", "build"), ("编译", "compile"), ("打包", "package"), ("发送", "send"), ("等待", "wait"),
    ("休眠", "sleep"), ("删除", "delete"), ("复制", "copy"), ("解压", "unzip"), ("更新", "update"),
    ("渲染", "render"), ("问候", "greet"), ("数据", "data"), ("模型", "model"), ("日志", "logs"),
    ("图像", "images"), ("图片", "images"), ("文本", "text"), ("订单", "orders"), ("用户", "users"),
    ("结果", "results"), ("指标", "metrics"), ("样本", "samples"), ("特征", "features"), ("硬币", "coin"),
    ("正面", "heads"), ("反面", "tails"), ("你好", "hello"), ("世界", "world"), ("随机数", "random-number"),
    ("数字", "number"), ("表", "table"), ("填充", "fill"), ("补全", "fill"), ("缺失值", "missing-values"),
    ("消费", "consume"), ("重新训练", "retrain"), ("日报", "daily-report"), ("周报", "weekly-report"),
    ("做", "do"), ("生产环境", "production"), ("写进", "write"), ("写", "write"), ("克隆", "clone"),
    ("代码", "code"), ("仓库", "repo"), ("冒烟测试", "smoke-test"), ("求总数", "sum"), ("求总", "sum"),
    ("超参数搜索", "search"), ("超参搜索", "search"), ("掩膜", "masks"), ("瓦片", "tiles"), ("平方", "square"),
    ("睡眠", "sleep"), ("睡", "sleep"), ("回滚", "rollback"),
    ("物化", "materialize"), ("全量发布", "promote"), ("失败", "fail"), ("汇合", "join"), ("合流", "join"),
    ("选", "choose"), ("检索", "retrieve"), ("分支", "branch"),
    ("镜像", "image"), ("清空", "clear"), ("识别", "recognize"), ("监测", "monitor"), ("刷新", "refresh"),
    ("重建", "rebuild"), ("下线", "retire"), ("求和", "sum"), ("相加", "add"), ("加", "add"),
    ("新加坡", "singapore"), ("加拿大", "canada"), ("加州", "california"), ("更加", "more"), ("参加", "attend"),
    ("乘", "multiply"), ("日期", "date"), ("消息", "message"), ("说", "say"),
    ("基准测试", "benchmark"), ("性能测试", "benchmark"), ("审批", "approve"), ("读", "read"),
    ("抓取", "crawl"), ("去噪", "denoise"), ("重采样", "resample"), ("插值", "interpolate"),
    ("编码", "encode"), ("解码", "decode"), ("重排", "rerank"), ("加密", "encrypt"),
    ("解密", "decrypt"), ("校准", "calibrate"), ("剪枝", "prune"), ("转写", "transcribe"),
    ("摘要", "summarize"), ("画图", "plot"), ("绘制", "plot"), ("对比", "compare"),
    ("拆分", "split"), ("抽样", "sample"), ("评分", "score"), ("恢复", "restore"),
    ("迁移", "migrate"), ("预热", "warm"), ("扩容", "scale"), ("重启", "restart"),
    ("格式化", "format"), ("灰度", "canary"),
    ("推荐", "recommendations"), ("画像", "profiles"), ("算法", "algorithm"), ("开发", "development"),
    ("拉", "pull"), ("推给", "push"), ("推到", "push"), ("转成", "convert"), ("转为", "convert"),
    ("切块", "chunk"), ("分块", "chunk"), ("画个", "plot"), ("画一", "plot"), ("画出", "plot"),
    ("抽", "extract"), ("构造", "build"), ("对账", "reconcile"), ("算", "compute"),
    ("降噪", "denoise"), ("显著性检验", "significance-test"), ("检验", "test"),
    ("回灌", "backfill"), ("补数", "backfill"), ("重跑", "rerun"), ("回放", "replay"), ("对齐", "align"),
    ("去水印", "remove-watermark"), ("压测", "load-test"),
    ("测试环境", "test-environment"), ("写明", "stating"), ("训练好", "trained"), ("开发环境", "dev-environment"),
];

/// The Chinese word of [`CJK_WORDS`] at `tokens[i]`: how many tokens it
/// spans and its English (the first listed wins).
pub fn cjk_word_at(tokens: &[Token], i: usize) -> Option<(usize, &'static str)> {
    CJK_WORDS
        .iter()
        .find_map(|(zh, en)| phrase_at(tokens, i, zh).map(|n| (n, *en)))
}

/// Chinese verbs among [`CJK_WORDS`] (the rest are nouns).
pub fn is_cjk_noun(english: &str) -> bool {
    matches!(
        english,
        "data"
            | "recommendations"
            | "profiles"
            | "algorithm"
            | "development"
            | "test-environment"
            | "stating"
            | "trained"
            | "dev-environment"
            | "model"
            | "logs"
            | "images"
            | "text"
            | "orders"
            | "users"
            | "results"
            | "metrics"
            | "samples"
            | "features"
            | "coin"
            | "heads"
            | "tails"
            | "hello"
            | "world"
            | "random-number"
            | "number"
            | "table"
            | "fail"
            | "image"
            | "branch"
            | "date"
            | "message"
            | "code"
            | "repo"
            | "masks"
            | "tiles"
            | "greeting"
            | "production"
            | "missing-values"
    )
}
