//! Shapes read whatever the words: what is not wanted, ranges of dates,
//! task ids, steps in a branch after "then", lists of unknown actions.

use super::tests::plan;
use super::*;
use crate::decompose::{FanOutValues, Subtask};

pub(super) fn tasks(text: &str) -> Vec<Subtask> {
    plan(text)
        .decomposition
        .stages
        .into_iter()
        .flat_map(|s| s.tasks)
        .collect()
}

/// The width of the first fan-out among `tasks`.
pub(super) fn width(tasks: &[Subtask]) -> Option<usize> {
    tasks
        .iter()
        .find_map(|t| t.fan_out.as_ref())
        .map(|f| f.width())
}

/// The first training step of `all`.
pub(super) fn training(all: &[Subtask]) -> &Subtask {
    all.iter()
        .find(|t| t.kind.trains())
        .unwrap_or_else(|| panic!("no training step in {all:?}"))
}

/// How many times the first training step of `text` runs.
fn training_width(text: &str) -> Option<usize> {
    width(std::slice::from_ref(training(&tasks(text))))
}

/// The names of each stage's steps.
pub(super) fn stages(text: &str) -> Vec<Vec<String>> {
    plan(text)
        .decomposition
        .stages
        .iter()
        .map(|s| s.tasks.iter().map(action::step_name).collect())
        .collect()
}

pub(super) fn names(text: &str) -> Vec<String> {
    tasks(text).iter().map(action::step_name).collect()
}

#[test]
fn what_is_not_wanted_makes_no_step() {
    for text in [
        "preprocess the tweets, train a classifier, evaluate it. do NOT deploy anything",
        "train the model and evaluate it, skip the deployment this time",
        "训练模型，评估一下，不要部署",
    ] {
        let kinds: Vec<TaskKind> = tasks(text).iter().map(|t| t.kind).collect();
        assert!(!kinds.contains(&TaskKind::Deploy), "{text}: {kinds:?}");
        assert!(kinds.contains(&TaskKind::Train), "{text}: {kinds:?}");
    }
    // A branch that asks for nothing is no step either.
    let n = tasks("计算 PSI，如果 PSI 大于 0.2 就重新训练，否则什么都不做").len();
    assert_eq!(n, 2);
}

#[test]
fn a_step_after_then_stays_in_its_branch() {
    let all = tasks(
        "compute the drift score; if it is above 0.2 retrain the model and then redeploy it; otherwise do nothing",
    );
    let conditional = all.iter().filter(|t| t.condition.is_some()).count();
    assert_eq!(conditional, 2, "{all:?}");
}

#[test]
fn dates_and_months_fan_out() {
    let all = tasks(
        "for every date from 2024-02-27 to 2024-03-02, run `sessionize.py`, then validate the row counts",
    );
    let dates = all
        .iter()
        .find_map(|t| match &t.fan_out.as_ref()?.values {
            FanOutValues::List(v) => Some(v.clone()),
            _ => None,
        })
        .expect("a fan-out over the dates");
    assert_eq!(
        dates,
        [
            "2024-02-27",
            "2024-02-28",
            "2024-02-29",
            "2024-03-01",
            "2024-03-02"
        ]
    );
    let all = tasks(
        "for each month from January to June 2023, extract text from the invoices, then reconcile the totals",
    );
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(width(&all), Some(6));
    for (text, days) in [
        (
            "backfill the daily demand forecast for each day of March 2024 (31 days), then reconcile the totals",
            31,
        ),
        (
            "backfill the forecast for each day of February 2024, then reconcile the totals",
            29,
        ),
        (
            "for each day of April, backfill the forecast, then reconcile the totals",
            30,
        ),
    ] {
        let all = tasks(text);
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!(width(&all), Some(days), "{text}");
    }
    // In Chinese: a range of months, the last days; "每天" there is no
    // schedule, and "重跑" without a count or a failure runs the job.
    for (text, n) in [
        (
            "对2023年1月到12月每个月的用户画像做回灌（12个月并行跑），全部跑完后做一次数据质量检查",
            12,
        ),
        (
            "对过去90天每天跑一次特征计算（90个任务），然后做数据质量检查",
            90,
        ),
        (
            "对 2024-03-01 到 2024-03-10 的每一天分别重跑 Spark 任务，每个失败重试 2 次；全部完成后做一次行数校验",
            10,
        ),
    ] {
        let p = plan(text);
        let all = tasks(text);
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!(width(&all), Some(n), "{text}");
        assert!(p.decomposition.schedule.is_none(), "{text}");
        assert!(
            p.warnings.iter().all(|w| !w.message.contains("read past")),
            "{:?}",
            p.warnings
        );
    }
    // ("失败的话最多重试 3 次" is a retry; "发个消息到群里" notifies.)
    let p = plan(
        "每小时拉一次气温数据，存到 postgres 里，都跑完了发个消息到群里，失败的话最多重试 3 次",
    );
    assert_eq!(
        names(
            "每小时拉一次气温数据，存到 postgres 里，都跑完了发个消息到群里，失败的话最多重试 3 次"
        )
        .len(),
        3
    );
    assert_eq!(
        p.workflow
            .steps
            .last()
            .and_then(|s| s.retry.as_ref())
            .map(|r| r.limit),
        Some(3)
    );
    assert!(
        p.warnings.iter().all(|w| !w.message.contains("read past")),
        "{:?}",
        p.warnings
    );
    assert_eq!(names("训练模型，失败的话重试2次"), ["train-model"]);
    let rerun = tasks("对 2024-03-01 到 2024-03-10 的每一天分别重跑 Spark 任务，每个失败重试 2 次");
    assert_eq!(rerun[0].retry, Some(2));
}

#[test]
fn counted_things_fan_out_in_both_languages() {
    let fanned = |text: &str| width(&tasks(text));
    assert_eq!(
        fanned("for each of the 20 podcast episodes: transcribe it, then publish the transcripts"),
        Some(20)
    );
    assert_eq!(
        fanned("对北京、上海、广州、深圳、杭州5个城市分别训练 XGBoost 模型，然后出报告"),
        Some(5)
    );
    assert_eq!(fanned("对100个测试问题分别生成答案，然后出报告"), Some(100));
    // ("核心表": core tables, no CPU cores.)
    let all = tasks("对dwd层的10张核心表逐个跑数据质量检查，然后发告警");
    assert_eq!(width(&all), Some(10));
    assert!(all[0].resources.cpus.is_none(), "{all:?}");
}

#[test]
fn task_ids_and_unknown_verbs_in_a_list_are_steps() {
    assert_eq!(
        names("[extract_customers, extract_orders] >> build_fact_sales >> refresh_dashboard"),
        [
            "extract-customers",
            "extract-orders",
            "build-fact-sales",
            "refresh-dashboard"
        ]
    );
    // (Jobs named by a verb and what it does, after a colon.)
    assert_eq!(
        stages(
            "checkout the repo, build influxd, then in parallel: test-unit, test-cov and test-e2e"
        ),
        [
            vec!["checkout-repo"],
            vec!["build-influxd"],
            vec!["test-unit", "test-cov", "test-e2e"]
        ]
    );
    // (The first of the list too, and the exit handler after it.)
    let p = plan(
        "terraform plan, wait for approval, terraform apply, and whatever happens unlock the state at the end",
    );
    let steps: Vec<&str> = p.workflow.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        steps,
        ["terraform-plan", "wait-approval", "terraform-apply"]
    );
    assert_eq!(p.workflow.on_exit.len(), 1, "{:?}", p.workflow.on_exit);
    let n = names(
        "read the changelog from kafka, apply the changes to the table, compact small files, and expire the old snapshots",
    );
    assert_eq!(n.len(), 4, "{n:?}");
    assert!(
        n[2].starts_with("compact") && n[3].starts_with("expire"),
        "{n:?}"
    );
    // A parameter is no task: "num_round from 50 to 100".
    assert_eq!(
        names("hyperparameter search for XGBoost with Katib, num_round from 50 to 100").len(),
        1
    );
    // Task ids in brackets mid-chain, whatever their words, run side by
    // side; a task id saying what it acts on is a step.
    let chain = "extract_events >> [agg_by_country, agg_by_device] >> export_to_s3";
    assert_eq!(
        names(chain),
        [
            "extract-events",
            "agg-by-country",
            "agg-by-device",
            "export-to-s3"
        ]
    );
    let stages = plan(chain).decomposition.stages;
    let sizes: Vec<usize> = stages.iter().map(|s| s.tasks.len()).collect();
    assert_eq!(sizes, [1, 2, 1]);
    assert_eq!(
        names("run stg_models; then dbt_test on everything"),
        ["run-stg-models", "dbt-test"]
    );
}

#[test]
fn a_fan_out_opening_its_sentence_is_the_next_steps() {
    let all =
        tasks("Load the data. For each of the 5 folds, train a LightGBM model. Then evaluate.");
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(all[0].fan_out.is_none(), "{all:?}");
    assert_eq!(all[1].kind, TaskKind::Train);
    assert_eq!(width(&all[1..2]), Some(5));
}

#[test]
fn titles_and_what_comes_before_first_are_context() {
    // A title naming what the steps make up.
    let kinds: Vec<TaskKind> = tasks(
        "Forecasting benchmark on ETTh1. Train an LSTM on it. After that, evaluate it, and write a report.",
    )
    .iter()
    .map(|t| t.kind)
    .collect();
    assert_eq!(kinds[0], TaskKind::Train, "{kinds:?}");
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    // What comes before "first"/"先" and is asked for again.
    let all = tasks(
        "用 YOLOv8 训练安全帽检测，数据在 s3 上，先 sync 到本地，然后训练 200 个 epoch，训练完验证一下 mAP",
    );
    let trains = all.iter().filter(|t| t.kind.trains()).count();
    assert_eq!(trains, 1, "{all:?}");
    let all = tasks(
        "so i have a folder of movie reviews. first tokenize them, then train a classifier and then evaluate it",
    );
    assert_eq!(all.len(), 3, "{all:?}");
}

#[test]
fn a_model_named_like_a_verb_is_a_model() {
    let all = tasks("train an LSTM and a Transformer in parallel, then evaluate them");
    assert!(
        all.iter().all(|t| t.kind != TaskKind::Preprocess),
        "{all:?}"
    );
    assert_eq!(all.iter().filter(|t| t.kind.trains()).count(), 2, "{all:?}");
}

#[test]
fn one_more_model_trained_beside_the_first() {
    let all = tasks(
        "train DeepFM and a Wide&Deep baseline at the same time, then evaluate both with AUC and NDCG@10",
    );
    assert_eq!(all.iter().filter(|t| t.kind.trains()).count(), 2, "{all:?}");
    // The second metric is no step.
    assert_eq!(all.len(), 3, "{all:?}");
}

#[test]
fn what_is_sent_and_where_to_is_one_step() {
    let w = plan("print hello, and when the workflow finishes, whatever the result, post its name and status to our slack webhook").workflow;
    assert_eq!((w.steps.len(), w.on_exit.len()), (1, 1), "{w:?}");
}

#[test]
fn a_step_named_again_as_done_is_no_new_step() {
    for (text, n) in [
        (
            "调用第三方接口拉取汇率数据，失败最多重试 6 次；拉取成功后写入 MySQL。",
            2,
        ),
        (
            "先训练模型，再评估，然后等人工审批，审批通过后部署到生产环境。",
            4,
        ),
        // Only one asked for before: "测试" was part of the deployment.
        (
            "先注册模型，再部署到预发环境做冒烟测试，测试通过后部署到生产",
            4,
        ),
    ] {
        assert_eq!(tasks(text).len(), n, "{text}");
    }
}

#[test]
fn chinese_values_after_each_fan_out() {
    let all = tasks("把新版本模型分别部署到北京、上海、新加坡三个机房，部署完跑一下冒烟测试");
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(width(&all[..1]), Some(3));
}

#[test]
fn a_later_clock_time_sets_the_schedules_hour() {
    let cron = plan("推荐模型每天增量训练。凌晨 4 点先拉取前一天的日志，再训练 DeepFM")
        .decomposition
        .schedule
        .map(|s| s.cron);
    assert_eq!(cron.as_deref(), Some("0 4 * * *"));
}

#[test]
fn a_made_verb_alone_in_a_list_is_a_step() {
    for text in [
        "ingest clickstream; sessionize; compute daily active users",
        "download -> sessionize -> upload",
    ] {
        let names = names(text);
        assert_eq!(names.len(), 3, "{text}: {names:?}");
        assert_eq!(names[1], "sessionize", "{text}");
        let all = tasks(text);
        assert!(all.iter().all(|t| t.condition.is_none()), "{text}: {all:?}");
    }
}

#[test]
fn a_models_parts_and_adjectives_are_no_second_step() {
    // Kind words in a row are one phrase.
    let all = tasks(
        "pretrain our 1.3B language model with DeepSpeed distributed training across 4 nodes, then evaluate it",
    );
    assert_eq!(all.len(), 2, "{all:?}");
    // A backbone in brackets is part of the detector.
    let all = tasks(
        "train a Faster R-CNN (ResNet-50 FPN backbone) detector on COCO with 8 GPUs, then evaluate mAP",
    );
    assert_eq!(all.iter().filter(|t| t.kind.trains()).count(), 1, "{all:?}");
}

#[test]
fn folds_counted_in_another_clause_fan_out() {
    assert_eq!(
        training_width(
            "对用户流失数据做 10 折交叉验证：每一折训练一个 LightGBM，最后把各折的 AUC 汇总写成报告。"
        ),
        Some(10)
    );
    let all = tasks(
        "数据量太大了，先把 parquet 文件 shard 成 32 份，每一份并行做特征提取，再 merge 起来，最后训练 XGBoost",
    );
    assert!(
        all.iter()
            .any(|t| t.fan_out.as_ref().is_some_and(|f| f.width() == 32)),
        "{all:?}"
    );
}

#[test]
fn a_model_trained_before_is_used_not_trained() {
    let all = tasks(
        "每天早上 7 点先拉取昨天的订单数据，然后用已经训练好的 LSTM 模型预测未来 7 天的销量，最后把预测结果写回 MySQL。",
    );
    assert!(all.iter().all(|t| !t.kind.trains()), "{all:?}");
    assert!(all.iter().any(|t| t.kind == TaskKind::Predict), "{all:?}");
}

#[test]
fn a_step_named_as_the_exit_task_runs_at_the_end() {
    let w = plan(
        "print hello, then fail on purpose; as the exit task, print the pipeline's final status",
    )
    .workflow;
    assert_eq!((w.steps.len(), w.on_exit.len()), (2, 1), "{w:?}");
}

#[test]
fn chinese_words_typed_with_the_wrong_characters() {
    // Pinyin input picks a word that sounds the same: 处里/处理, 评古/评估, 部属/部署.
    let kinds: Vec<TaskKind> = tasks("先预处里数据，再训练LightGBM，然后评古一下，最后部属到线上")
        .iter()
        .map(|t| t.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            TaskKind::Preprocess,
            TaskKind::Train,
            TaskKind::Evaluate,
            TaskKind::Deploy
        ]
    );
}

#[test]
fn configs_counted_in_another_clause_fan_out_but_epochs_do_not() {
    assert_eq!(
        training_width(
            "Random search over 20 sampled MLP configs on Fashion-MNIST: train each config for 10 epochs, keep the one with the lowest validation loss, then evaluate only that model on the test set."
        ),
        Some(20)
    );
    // A loop inside the step is no fan-out.
    let all = tasks("Train a ResNet-18 for 10 epochs and save a checkpoint every epoch.");
    assert!(all.iter().all(|t| t.fan_out.is_none()), "{all:?}");
}

#[test]
fn a_parameter_named_by_a_capital_letter_is_no_step() {
    let all = tasks(
        "Grid search for an RBF SVM: C in {0.1, 1, 10} x gamma in {0.001, 0.01}, i.e. 6 configs. Train every config, then pick the best one.",
    );
    assert_eq!(all.len(), 2, "{all:?}");
    let train = training(&all);
    assert_eq!(width(std::slice::from_ref(train)), Some(6), "{all:?}");
    assert_eq!(
        training_width(
            "复现论文表 3：dropout 取 0.1、0.3、0.5，每个取值各跑 3 个种子（一共 9 次训练），然后画出均值±标准差的柱状图。"
        ),
        Some(9)
    );
}

#[test]
fn a_training_that_counts_its_trials_runs_that_many() {
    assert_eq!(
        training_width(
            "run 16 random-search trials of XGBoost (max_depth between 2 and 10), then pick the trial with the best accuracy and register it"
        ),
        Some(16)
    );
}

#[test]
fn what_is_sent_by_email_is_a_notification_whatever_it_names() {
    let all = tasks("evaluate the model on last week's data, then send me the metrics by email");
    assert_eq!(
        all.iter().map(|t| t.kind).collect::<Vec<_>>(),
        [TaskKind::Evaluate, TaskKind::Notify],
        "{all:?}"
    );
    // Sent elsewhere, it is no notification.
    let all = tasks("train the model, then send the metrics to the warehouse");
    assert!(all.iter().all(|t| t.kind != TaskKind::Notify), "{all:?}");
}

#[test]
fn what_the_user_is_doing_is_no_step() {
    let all = tasks(
        "preprocess the tweets, train a sentiment classifier, evaluate it. do NOT deploy anything, we're just benchmarking.",
    );
    assert_eq!(all.len(), 3, "{all:?}");
    // Saying what a step does is still one.
    let all = tasks("load the reviews; we are training a sentiment classifier on them");
    assert_eq!(all.len(), 2, "{all:?}");
}

#[test]
fn a_remark_in_brackets_is_no_step_but_a_count_in_one_is_read() {
    let all = tasks(
        "one-hot the categoricals (one preprocessing step is fine), then train a ridge regression",
    );
    assert_eq!(all.len(), 2, "{all:?}");
    let all = tasks("fine-tune Whisper-small on the clips (1 GPU is enough), then evaluate WER");
    let train = training(&all);
    assert_eq!(train.resources.gpus, Some(1), "{all:?}");
}

#[test]
fn parameter_sets_counted_in_chinese_fan_out() {
    assert_eq!(
        training_width(
            "n_estimators 取 100、300，max_depth 取 5、10、20，共 6 组参数，每组训练一个模型，然后选出最好的一组"
        ),
        Some(6)
    );
    assert_eq!(
        training_width(
            "复现论文表 3：dropout 取 0.1、0.3、0.5，每个取值各跑 3 个种子（一共 9 次训练），然后画出均值±标准差的柱状图。"
        ),
        Some(9)
    );
}

#[test]
fn a_step_placed_after_one_a_later_sentence_orders_follows_it() {
    let want = [
        vec!["refresh-customer-360".to_string()],
        vec!["build-segments".into()],
        vec!["sync-segments-to-hubspot".into()],
    ];
    assert_eq!(
        stages(
            "sync_segments_to_hubspot runs after build_segments; build_segments runs after refresh_customer_360."
        ),
        want
    );
    assert_eq!(
        stages(
            "build_segments runs after refresh_customer_360. sync_segments_to_hubspot runs after build_segments."
        ),
        want
    );
}

#[test]
fn two_objects_said_to_run_together_are_two_steps_side_by_side() {
    for text in [
        "同时从支付系统和订单系统拉前一天的数据，然后对账",
        "从支付系统和订单系统同时拉数据，然后对账",
        "先把图片和文本分开预处理，两个同时跑；然后训练模型",
        "先拉取负荷数据和天气数据（两个一起拉），再预处理",
        "extract image features with a ResNet and text features with BERT at the same time, then fuse them",
    ] {
        let got = stages(text);
        assert_eq!(got.len(), 2, "{text}: {got:?}");
        assert_eq!(got[0].len(), 2, "{text}: {got:?}");
    }
    assert_eq!(
        stages(
            "extract image features with a ResNet and text features with BERT at the same time, then fuse them"
        )[0],
        ["extract-image-features", "extract-text-features"]
    );
    // Without a word that they run apart, one step loads both; "分别"
    // over a list is a fan-out, not one step per pair.
    assert_eq!(tasks("从MySQL和Hive拉数据，然后训练模型").len(), 2);
    let all = tasks("对普通话、粤语、四川话三个测试集分别计算字错率，然后汇总出报告");
    assert_eq!(all.len(), 2, "{all:?}");
    // A message over WeCom is a notification.
    assert_eq!(tasks("然后给运营发企业微信")[0].kind, TaskKind::Notify);
}

#[test]
fn a_step_said_done_first_is_a_step_of_its_own() {
    let kinds = |text: &str| -> Vec<TaskKind> { tasks(text).iter().map(|t| t.kind).collect() };
    assert_eq!(kinds("训练完直接部署"), [TaskKind::Train, TaskKind::Deploy]);
    assert_eq!(
        kinds("训练完给运营发企业微信"),
        [TaskKind::Train, TaskKind::Notify]
    );
    // Named again once asked for, it is that step: "训练完后评估" after a
    // training evaluates it.
    assert_eq!(
        kinds("先清洗数据，然后训练模型，训练完后评估"),
        [TaskKind::Preprocess, TaskKind::Train, TaskKind::Evaluate]
    );
}

#[test]
fn every_model_listed_after_a_colon_is_trained_even_one_the_library_does_not_know() {
    let all = names(
        "Train three models in parallel: an LSTM, a vanilla Transformer and a DLinear baseline. Then evaluate them.",
    );
    assert_eq!(
        all,
        [
            "train-lstm",
            "train-transformer",
            "train-dlinear-baseline",
            "evaluate"
        ]
    );
    // Without the list, "同时训练 A 和 B 两个模型" trains two.
    let trained =
        tasks("先生成种子用户，然后同时训练热门召回和相似人群扩展两个模型，最后把结果合并")
            .iter()
            .filter(|t| t.kind.trains())
            .count();
    assert_eq!(trained, 2);
    // "builds the feature table" makes features.
    assert_eq!(
        tasks("build the user/item feature table")[0].kind,
        TaskKind::Features
    );
}

#[test]
fn a_condition_it_cannot_read_still_guards_the_step_after_it() {
    let all = tasks("if it is a weekend, print hello");
    assert_eq!(all.len(), 1, "{all:?}");
    let cond = all[0].condition.as_ref().expect("a condition");
    assert_eq!(
        (cond.metric.as_str(), cond.value.as_str()),
        ("weekend", "true")
    );
    assert_eq!(action::step_name(&all[0]), "print-hello");
}

#[test]
fn otherwise_before_a_colon_is_the_other_branch() {
    let all = tasks("run_checks. If the checks fail: page_oncall. Otherwise: publish_metrics.");
    assert_eq!(all.len(), 3, "{all:?}");
    let (failed, passed) = (all[1].condition.as_ref(), all[2].condition.as_ref());
    assert_eq!(failed.map(|c| c.value.as_str()), Some("fail"));
    assert_eq!(passed, failed.map(|c| c.clone().negate()).as_ref());
}

#[test]
fn a_step_later_in_a_branch_reads_what_the_branch_reads() {
    let ir = |text: &str| serde_json::to_value(plan(text).workflow).expect("serializes");
    let when = |w: &serde_json::Value, step: &str| -> String {
        let s = w["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == step)
            .unwrap();
        s["when"][0]["input"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let w = ir("run_checks; if the checks fail, page_oncall and then restart_service");
    assert_eq!(when(&w, "restart-service"), when(&w, "page-oncall"));
    let w = ir(
        "load_raw_events -> ge_checkpoint. If the checkpoint fails: page_oncall. Otherwise: aggregate_events -> publish_metrics.",
    );
    let publish = w["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "publish-metrics")
        .unwrap();
    assert_eq!(publish["depends"], serde_json::json!(["aggregate-events"]));
    assert_eq!(
        when(&w, "publish-metrics"),
        "{{steps.ge-checkpoint.outputs.parameters.result}}"
    );
}

#[test]
fn a_branch_opened_by_first_keeps_its_then_and_other_branches_end_at_then() {
    let guarded = |text: &str| -> Vec<(String, bool)> {
        plan(text)
            .workflow
            .steps
            .iter()
            .map(|s| (s.name.clone(), !s.when.is_empty()))
            .collect()
    };
    let got = guarded("先灰度发布，如果错误率低于 0.01 就全量发布，否则先自动回滚，再通知负责人");
    assert!(got.iter().filter(|(_, g)| *g).count() == 3, "{got:?}");
    let got = guarded(
        "train an xgboost model, if the accuracy is above 0.9 deploy the model, otherwise notify the team, then write a report",
    );
    let report = got
        .iter()
        .find(|(n, _)| n.contains("report"))
        .expect("a report");
    assert!(!report.1, "{got:?}");
}
