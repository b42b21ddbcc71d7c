//! Clauses read by their shape: a step after what opens a list, both
//! branches whatever their verbs, markers that run a clause beside the one
//! before, goal sentences, Chinese conditions and waits.

use super::tests::plan;
use super::tests_shapes::{names, stages, tasks, training, width};
use crate::decompose::{Comparison, TaskKind};

#[test]
fn a_step_after_what_opens_a_list_is_run_for_each() {
    let per_genre = "load the movies csv, then for each of the genres drama, comedy, action and horror compute the median gross, then join the stats into one table";
    // (The list's last value before a colon is no branch's outcome.)
    for text in [
        per_genre.to_owned(),
        per_genre.replace("horror compute", "horror: compute"),
    ] {
        let all = tasks(&text);
        assert_eq!(
            names(&text),
            ["load-movies-csv", "compute-median-gross", "join-stats"]
        );
        assert_eq!(width(&all), Some(4));
        assert!(all.iter().all(|t| t.condition.is_none()), "{all:?}");
    }
    for text in [
        "list the csv files in s3://landing/2024/, then for each file count its lines, then total the counts",
        "list the csv files in s3://landing/2024/, then for each file: count its lines, then total the counts",
    ] {
        assert_eq!(
            names(text),
            ["list-csv-files", "count-lines", "total-count"]
        );
    }
    let numbers =
        "for each of the numbers 1 through 5 check whether it's even or odd, then print a summary";
    let all = tasks(numbers);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(
        all[0].fan_out.as_ref().map(|f| f.parameter.as_str()),
        Some("number")
    );
    // A step after a colon is no heading, whatever its verb.
    let episodes = "for each of the 20 podcast episodes: transcribe with whisper on a GPU; then translate all transcripts to Spanish; then publish them to the CMS";
    let all = tasks(episodes);
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(width(&all), Some(20));
    // ("for each of the 12 stores": a noun after its count; "for the next
    // 28 days" orders nothing.)
    let stores = "for each of the 12 stores, run a Prophet forecast for the next 28 days; then combine all forecasts";
    assert_eq!(tasks(stores).len(), 2, "{:?}", tasks(stores));
}

#[test]
fn both_branches_are_steps_whatever_their_verbs() {
    let text =
        "train a model; if the accuracy is above 0.9, promote it to 100%, otherwise revert to v6";
    assert_eq!(names(text), ["train-model", "promote", "revert"]);
    // (A condition it cannot read ends at "run"; "it's" is one word.)
    for text in [
        "check_day; if it is a Saturday run light_refresh, else run full_refresh",
        "check_day; if it's a Saturday or Sunday run light_refresh, else run full_refresh",
    ] {
        let all = tasks(text);
        assert_eq!(
            names(text),
            ["check-day", "run-light-refresh", "run-full-refresh"]
        );
        assert!(all[1..].iter().all(|t| t.condition.is_some()), "{all:?}");
    }
}

#[test]
fn a_marker_opening_a_later_clause_runs_it_beside_the_one_before() {
    for text in [
        "pull the interactions from BigQuery, and at the same time export the item catalog from postgres, then build training triples",
        "We pull the interactions from BigQuery, and meanwhile export the item catalog. Once both are done we build training triples",
    ] {
        assert_eq!(
            stages(text),
            [
                vec!["pull-interactions", "export-item-catalog"],
                vec!["build-train-triples"]
            ],
            "{text}"
        );
    }
    // ("三个任务同时跑：A、B、C": a marker before a colon opens the list.)
    assert_eq!(
        stages("三个任务同时跑：清洗日志、清洗订单、清洗商品，都完成后做特征工程，然后训练")
            .iter()
            .map(Vec::len)
            .collect::<Vec<_>>(),
        [3, 1, 1]
    );
    // ("同时进行X和Y": the marker is about its own list.)
    assert_eq!(
        stages("读取日志数据，同时进行特征工程和数据质量检查，然后训练LightGBM").len(),
        3
    );
}

#[test]
fn a_goal_sentence_before_numbered_steps_is_their_heading() {
    let text = "We want to LoRA-fine-tune Llama-3-8B on our internal instruction data.
1. tokenize the dataset with the Llama-3 tokenizer
2. SFT with LoRA (rank 16) on 4 GPUs
3. merge the adapter into the base weights
4. evaluate the merged model on MT-Bench";
    let all = tasks(text);
    assert_eq!(all.len(), 4, "{all:?}");
    let train = training(&all);
    assert_eq!(train.resources.gpus, Some(4));
    assert!(train.model.is_some(), "{train:?}");
}

#[test]
fn chinese_conditions_read_without_an_if() {
    let when = |text: &str| -> Vec<(Comparison, String)> {
        tasks(text)
            .iter()
            .filter_map(|t| t.condition.as_ref().map(|c| (c.operator, c.value.clone())))
            .collect()
    };
    // "…的话" opens a condition as "就" does; "有问题" is a failure.
    assert_eq!(
        when("对核心表跑数据质量检查，有问题的话发飞书告警"),
        [(Comparison::Eq, "fail".to_owned())]
    );
    assert_eq!(
        when("训练模型，在测试集上评估，AUC≥0.9的话注册模型，不到0.9就把错分样本导出来"),
        [
            (Comparison::Ge, "0.9".to_owned()),
            (Comparison::Lt, "0.9".to_owned())
        ]
    );
}

#[test]
fn waiting_for_something_to_arrive_is_a_step() {
    for text in ["等数据文件到达后，训练模型", "先等数据文件到达，再训练模型"]
    {
        let p = plan(text);
        assert_eq!(p.explanations[0].step, "wait");
        assert_eq!(p.decomposition.stages.len(), 2);
    }
}

#[test]
fn a_step_a_workflow_ends_or_starts_with_is_named_by_its_verb() {
    assert_eq!(
        names("download the files, then index everything. Finish by printing done."),
        ["download-files", "index-everything", "print-done"]
    );
    assert_eq!(
        stages(
            "download the files, then checksum and unzip them in parallel, then index everything"
        ),
        [
            vec!["download-files"],
            vec!["checksum", "unzip"],
            vec!["index-everything"]
        ]
    );
}

#[test]
fn a_handler_said_to_run_on_failure_runs_only_when_the_run_failed() {
    let when = |text: &str| {
        let p = plan(text);
        assert_eq!(
            p.workflow.on_exit.len(),
            1,
            "{text}: {:?}",
            p.workflow.on_exit
        );
        serde_json::to_value(&p.workflow.on_exit[0].when).expect("serializes")
    };
    let failed = serde_json::json!([{"input": "{{workflow.status}}", "operator": "ne", "value": "Succeeded"}]);
    for text in [
        "train the model, then deploy it. If anything fails, page the on-call",
        "train the model, then deploy it; on failure, notify #ml-alerts",
        "训练模型，然后部署，任何一步失败就发告警",
    ] {
        assert_eq!(when(text), failed, "{text}");
    }
    for text in [
        "train the model, then deploy it; no matter what, send a slack message",
        "train the model, then deploy it. Even if a step fails, clean up the workspace",
    ] {
        assert_ne!(when(text), failed, "{text}");
    }
    // ("retry 3 times on failure" is a retry, no handler.)
    let p = plan("train the model, retry 3 times on failure, then deploy it");
    assert!(p.workflow.on_exit.is_empty());
    assert!(
        p.workflow.steps.iter().all(|s| s.when.is_empty()),
        "{:?}",
        p.workflow.steps
    );
}

#[test]
fn numbered_steps_run_in_the_order_listed() {
    for text in [
        "run step1, step2 and step3 one after another",
        "run step1, step2 and step3 sequentially",
    ] {
        assert_eq!(stages(text).len(), 3, "{text}: {:?}", stages(text));
    }
    assert_eq!(
        stages("run task1 and task2 in parallel, then task3")
            .iter()
            .map(Vec::len)
            .collect::<Vec<_>>(),
        [2, 1]
    );
}

#[test]
fn verbs_of_two_words_are_one_verb() {
    assert_eq!(
        names(
            "every night at 2am, back up the database to S3 and delete backups older than 30 days"
        ),
        ["back-up-database", "delete-backup-older"]
    );
    // ("a cluster" after "spin up" is what it acts on, no clustering.)
    let all = tasks("spin up a cluster, run the job, then tear down the cluster");
    assert_eq!(
        names("spin up a cluster, run the job, then tear down the cluster"),
        ["spin-up-cluster", "run-job", "tear-down-cluster"]
    );
    assert!(all.iter().all(|t| !t.kind.trains()), "{all:?}");
}

#[test]
fn a_later_step_of_a_branch_on_a_parameter_reads_that_parameter() {
    let p = plan(
        "run the unit tests; if they pass, build the docker image and push it to ECR; otherwise notify the author",
    );
    let when = |name: &str| {
        let step = p
            .workflow
            .steps
            .iter()
            .find(|s| s.name == name)
            .expect(name);
        serde_json::to_value(&step.when).expect("serializes")
    };
    assert_eq!(when("push"), when("build-docker-image"));
}

#[test]
fn the_preposition_again_after_and_runs_the_verb_again() {
    let text = "replay last month's transactions through the new rule set and through the old rule set in parallel, then reconcile the two outputs, then write a report";
    assert_eq!(
        stages(text),
        [
            vec!["replay-last-month-transactions", "replay-old-rule-set"],
            vec!["reconcile-two-output"],
            vec!["write-report"],
        ]
    );
    let text = "pull the experiment logs of the control group and of the treatment group at the same time, then compute the lift";
    assert_eq!(
        stages(text),
        [
            vec!["pull-experiment-log", "pull-treatment-group"],
            vec!["compute-lift"],
        ]
    );
    // "another one on …": one more of what the step before made.
    let text = "train an xgboost model on the csv and another one on the parquet, in parallel; then predict with both";
    assert_eq!(stages(text)[0], ["train-xgboost", "train-parquet"]);
    // More about the same step, or one message to two people, is one step.
    for text in [
        "train a model on the sales data and on 4 GPUs, then evaluate",
        "train the model with 2 GPUs and with 64GB of memory, then evaluate",
        "send the report to the team and to the manager",
    ] {
        let all = tasks(text);
        assert!(all.len() <= 2 && all[0].text.contains(" and "), "{all:?}");
    }
}

#[test]
fn chinese_outcomes_before_zai_and_cai_are_conditions() {
    // "通过了再…" and "三项都通过才…" run on the outcome, as "就" does.
    let text = "先跑数据质量检查，通过了再训练模型，不通过就通知负责人";
    let all = tasks(text);
    assert_eq!(all.len(), 3, "{all:?}");
    let values: Vec<Option<&str>> = all
        .iter()
        .map(|t| t.condition.as_ref().map(|c| c.value.as_str()))
        .collect();
    assert_eq!(values, [None, Some("pass"), Some("fail")]);
    let text = "1. 生成模型卡 2. 做公平性评估 3. 隐私数据扫描 4. 三项都通过才注册到生产模型库";
    let all = tasks(text);
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(all[3].condition.is_some(), "{all:?}");
    // (A step that passes is waited for: "等人工审批通过后再部署" approves,
    // then deploys.)
    assert_eq!(
        tasks("构建发布版本，等人工审批通过后再部署到生产环境").len(),
        3
    );
    // "等2小时" waits.
    let all = tasks("先部署，等2小时，然后检查错误率");
    assert_eq!(all[1].command.as_deref(), Some("sleep 7200"), "{all:?}");
}

#[test]
fn chinese_lists_before_their_verb_belong_to_it() {
    // "A和B并行训练": both models, side by side, in the step's own stage.
    let text =
        "1. 从MySQL拉用户行为数据 2. 特征工程 3. 逻辑回归和随机森林并行训练 4. 选效果好的那个";
    assert_eq!(
        stages(text)[1..3],
        [
            vec!["engineer-features".to_owned()],
            vec![
                "train-logistic-regression".to_owned(),
                "train-random-forest".to_owned()
            ],
        ]
    );
    // "对A、B、C三类实体分别…": the values of one step's fan-out, no steps.
    let text = "对用户、商品、店铺三类实体分别计算特征，然后写入Feast";
    let all = tasks(text);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(width(&all), Some(3));
    // (Steps listed with 、 stay steps.)
    let text = "APP 日志清洗、Web 日志清洗、小程序日志清洗这三个任务并行跑，之后合并成一张宽表";
    assert_eq!(stages(text)[0].len(), 3, "{:?}", stages(text));
}

#[test]
fn a_condition_ends_where_its_branch_begins() {
    // "better" with no number compares nothing: the branch's verb is no
    // part of the condition ("promote it to 100%" was read as "score < 1").
    let text = "deploy v7 to 10% traffic, compare error rates with v6, if v7 is not worse promote it to 100%, otherwise revert to v6";
    let all = tasks(text);
    assert_eq!(
        names(text),
        ["deploy-v7", "compare-error-rates", "promote", "revert"]
    );
    let promote = all[2].condition.as_ref().expect("promote is a branch");
    assert_eq!(
        (
            promote.metric.as_str(),
            promote.operator,
            promote.value.as_str()
        ),
        ("v7", Comparison::Ne, "worse")
    );
    assert!(all[3].condition.is_some(), "{all:?}");
    // What is counted names the metric, and the branch after it is a step.
    let text = "diff the knowledge base against last week, upsert the changed documents, and if more than 500 docs changed, rebuild the HNSW index too";
    let all = tasks(text);
    assert_eq!(
        names(text),
        [
            "diff-knowledge-base",
            "upsert-changed-documents",
            "rebuild-hnsw-index"
        ]
    );
    let rebuild = all[2].condition.as_ref().expect("rebuild is conditional");
    assert_eq!(
        (
            rebuild.metric.as_str(),
            rebuild.operator,
            rebuild.value.as_str()
        ),
        ("docs_changed", Comparison::Gt, "500")
    );
    // A plural after a count is counted even when it could be a verb; a
    // step's own verb is not.
    let text = "run the nightly backfill, and if more than 3 partitions failed, page the on-call";
    assert_eq!(names(text), ["run-backfill", "page-on-call"]);
    let page = tasks(text)[1]
        .condition
        .clone()
        .expect("paging is conditional");
    assert_eq!(
        (page.metric.as_str(), page.operator, page.value.as_str()),
        ("partitions_failed", Comparison::Gt, "3")
    );
    let text = "index the documents and if fewer than 10 documents were indexed, send an alert";
    assert_eq!(names(text), ["index-documents", "send-alert"]);
    assert_eq!(
        tasks(text)[1].condition.as_ref().map(|c| c.operator),
        Some(Comparison::Lt)
    );
    assert_eq!(
        names("evaluate it; if it is above 0.9 deploys it"),
        ["evaluate", "deploy"]
    );
}

#[test]
fn a_condition_after_its_step_is_that_steps() {
    for text in [
        "train it, then deploy it, only if the accuracy is above 0.9",
        "train it, then deploy it if the accuracy is above 0.9.",
    ] {
        let all = tasks(text);
        assert_eq!(names(text), ["train", "deploy"], "{text}");
        assert!(all[1].condition.is_some(), "{text}: {all:?}");
    }
    // The condition names nothing: "push-serve", not "serve-but-only".
    let text = "train it, then push it to serving, but only if the evaluator blessed it";
    assert_eq!(names(text), ["train", "push-serve"]);
    assert!(tasks(text)[1].condition.is_some());
}

#[test]
fn keeping_what_there_is_asks_for_no_step() {
    let text = "evaluate it; if the auc is above 0.8 deploy it, otherwise keep the current model and notify the team";
    let all = tasks(text);
    assert_eq!(names(text), ["evaluate", "deploy", "notify-team"]);
    assert!(all[2].condition.is_some(), "{all:?}");
    // Understood, so nothing is read past.
    let p = plan("evaluate it; if the auc is above 0.8 deploy it, otherwise do nothing");
    assert!(
        p.warnings.iter().all(|w| !w.message.contains("read past")),
        "{:?}",
        p.warnings
    );
}

#[test]
fn steps_side_by_side_in_arrows_and_asides() {
    assert_eq!(
        stages("load raw logs -> parse -> (train fraud model || train churn model) -> notify"),
        [
            vec!["load-raw-log"],
            vec!["parse"],
            vec!["train-fraud-model", "train-churn-model"],
            vec!["notify"],
        ]
    );
    // One more of the step before, told apart by "without".
    assert_eq!(
        stages(
            "train one forest on all features and, in parallel, one forest without the bureau features; then evaluate both"
        ),
        [
            vec!["train-forest", "train-without-bureau-features"],
            vec!["evaluate"],
        ]
    );
}

#[test]
fn what_is_done_first_runs_first_whatever_follows_it() {
    // "first (…)": the aside restates the order and asks for nothing; the
    // nouns after "and" are more of what is pseudonymized, and an email
    // that is pseudonymized is no message.
    let text = "Copy prod.users into the analytics sandbox, but pseudonymize the email and phone columns first (before the copy happens).";
    let p = plan(text);
    assert_eq!(
        names(text),
        ["pseudonymize-email-phone-columns", "copy-prod-users"]
    );
    assert!(p.decomposition.stages[0].tasks[0].kind != TaskKind::Notify);
    assert!(
        p.warnings.iter().all(|w| !w.message.contains("read past")),
        "{:?}",
        p.warnings
    );
    // A channel is still where a message goes.
    let page = "pull the server metrics, then open a pagerduty incident";
    assert_eq!(tasks(page)[1].kind, TaskKind::Notify);
    // A condition before the step names nothing either.
    assert_eq!(
        names("deploy it as a 5% canary; if the canary is healthy, promote it to 100% of traffic"),
        ["deploy", "promote"]
    );
}

#[test]
fn every_listed_action_is_a_step_and_a_noun_after_and_is_none() {
    // A verb of two joined words, and a step after where things start.
    assert_eq!(
        names(
            "deploy the new model to green; load-test green for 10 minutes; switch the router to green"
        ),
        ["deploy-model", "load-test-green", "switch-router"]
    );
    let text = "RLHF-lite: start from our Llama-3-8B SFT checkpoint, generate 4 responses per prompt, build preference pairs, run DPO training on 8 GPUs";
    let all = tasks(text);
    assert_eq!(
        names(text),
        ["generate-responses", "build-preference-pairs", "train-llm"]
    );
    assert_eq!(training(&all).model.as_deref(), Some("llm"));
    // What follows "and" is what the step acts on, not a step.
    assert_eq!(
        names("fetch the repo stats, then log how many stars and contributors it has"),
        ["fetch-repo-stats", "log-how-many-stars"]
    );
    assert_eq!(
        names("resize images and masks to 512x512, then train the unet"),
        ["resize-images", "train-cnn"]
    );
    // A task id stays a step, and a verb with its object stays a verb.
    assert_eq!(
        names("extract_users and extract_events run in parallel, then transform"),
        ["extract-users", "extract-events", "transform"]
    );
    assert_eq!(
        names("clean the data and splits it into folds"),
        ["clean-data", "split"]
    );
    // Where a step acts is no step: the registry is where v12 is archived.
    let text = "archive recsys v12 in the model registry, then notify #ml-oncall";
    assert_eq!(names(text), ["archive-recsys-v12", "notify-ml-oncall"]);
    assert_ne!(tasks(text)[0].kind, TaskKind::Register);
}

#[test]
fn a_wait_is_named_by_what_it_waits_for() {
    assert_eq!(
        names("build the release; then wait for someone to approve it; then release"),
        ["build-release", "wait-approve", "release"]
    );
    assert_eq!(
        names("terraform plan, wait for approval, terraform apply"),
        ["terraform-plan", "wait-approval", "terraform-apply"]
    );
    // How long is no name.
    assert_eq!(names("wait for 10 minutes, then train"), ["wait", "train"]);
}
