use super::*;

fn action(text: &str) -> Option<Action> {
    let t = tokenize(text);
    generic(&t, &vec![false; t.len()], false)
}

fn named(kind: TaskKind, text: &str, model: Option<&str>) -> String {
    let mut task = Subtask::new(kind, text);
    task.model = model.map(str::to_owned);
    step_name(&task)
}

#[test]
fn actions_from_the_shape_of_a_clause() {
    let a = action("frobnicate the widgets").unwrap();
    assert_eq!((a.name.as_str(), a.labelled), ("frobnicate-widgets", false));
    assert_eq!(action("A runs").unwrap().name, "a");
    assert_eq!(action("then run step B").unwrap().name, "b");
    assert_eq!(action("print 'heads'").unwrap().name, "print-heads");
    assert_eq!(action("抛一枚硬币").unwrap().name, "flip-coin");
    assert_eq!(action("运行A").unwrap().name, "a");
    assert!(action("Make me a sandwich").unwrap().off_topic);
    assert_eq!(action("This is a pipeline for churn"), None);
    assert_eq!(action("hello there"), None);
    assert_eq!(action("a model"), None);
}

#[test]
fn names_come_from_the_users_words() {
    assert_eq!(
        named(TaskKind::Preprocess, "clean the text", None),
        "clean-text"
    );
    assert_eq!(named(TaskKind::Preprocess, "去重", None), "dedupe");
    assert_eq!(
        named(TaskKind::Train, "train an LSTM", Some("lstm")),
        "train-lstm"
    );
    assert_eq!(
        named(
            TaskKind::Preprocess,
            "dedupe the records from the CRM",
            None
        ),
        "dedupe-record"
    );
    assert_eq!(named(TaskKind::Evaluate, "evaluate it", None), "evaluate");
    assert_eq!(named(TaskKind::Select, "keep the best", None), "keep-best");
    assert_eq!(named(TaskKind::Export, "导出模型", None), "export-model");
}
