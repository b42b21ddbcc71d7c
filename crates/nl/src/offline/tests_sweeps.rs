//! Hyperparameter sweeps read by their shape: values in scientific
//! notation, several named lists crossed, a list whose name comes before
//! the words that give its values, and a list said before the step it is
//! run for.

use super::TaskKind;
use super::tests_shapes::{names, tasks, training, width};
use crate::decompose::FanOutValues;

/// The parameter and values of the first training step's fan-out.
fn sweep(text: &str) -> (String, Vec<String>) {
    let all = tasks(text);
    let f = training(&all)
        .fan_out
        .clone()
        .unwrap_or_else(|| panic!("no fan-out in {all:?}"));
    match f.values {
        FanOutValues::List(values) => (f.parameter, values),
        other => panic!("not a list: {other:?}"),
    }
}

#[test]
fn values_in_scientific_notation_are_a_list() {
    let (parameter, values) =
        sweep("fine-tune bert with learning rates 2e-5, 3e-5 and 5e-5, then deploy the best");
    assert_eq!(parameter, "learning_rate");
    assert_eq!(values, ["2e-5", "3e-5", "5e-5"]);
    // ("learning rate" names what varies; "learning" is no second training.)
    let text = "sweep the learning rate over 0.1, 0.01 and 0.001 and keep the best model";
    let all = tasks(text);
    assert_eq!(all.iter().filter(|t| t.kind.trains()).count(), 1, "{all:?}");
    assert_eq!(sweep(text).0, "learning_rate");
}

#[test]
fn named_lists_in_one_clause_are_crossed() {
    let text = "train the same model with learning rates 1e-2, 1e-3 and 1e-4 and batch sizes 32 and 64 (all 6 combinations), pick the best by validation loss, then retrain it on the full data";
    let (parameter, values) = sweep(text);
    assert_eq!(parameter, "learning_rate_batch_size");
    assert_eq!(values.len(), 6);
    assert_eq!(values[0], "1e-2-32");
    // "by validation loss" is what the best is picked by, no evaluation.
    let kinds: Vec<TaskKind> = tasks(text).iter().map(|t| t.kind).collect();
    assert_eq!(kinds, [TaskKind::Train, TaskKind::Select, TaskKind::Train]);
    let (_, values) = sweep(
        "for each learning rate in {1e-4, 3e-4} and each seed in {0, 1, 2}, train the small CNN",
    );
    assert_eq!(values.len(), 6);
    // A model before the list is no part of its name.
    assert_eq!(
        sweep("train xgboost with max_depth 3, 5, 7 then evaluate").0,
        "max_depth"
    );
}

#[test]
fn chinese_lists_name_what_varies_before_the_words_that_give_values() {
    let text = "learning rate 分别取 0.1、0.01、0.001，每个值各训练一个 MLP，然后选出验证集 loss 最低的那个";
    assert_eq!(
        sweep(text),
        (
            "learning_rate".to_owned(),
            vec!["0.1".to_owned(), "0.01".to_owned(), "0.001".to_owned()]
        )
    );
    // "rank" could be a verb; before "取" it names what varies.
    let text =
        "LoRA 超参扫一下：rank 取 8、16、32、64，每组用1张A100，跑完挑loss最低的那组，再合并权重";
    let all = tasks(text);
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(sweep(text).0, "rank");
    assert_eq!(all[0].resources.gpus, Some(1));
}

#[test]
fn lists_said_before_their_step_are_crossed_for_it() {
    let text = "随机森林调参：n_estimators 取 100、300，max_depth 取 5、10、20，共 6 组参数，每组训练一个模型，在验证集上分别评估，选出最好的一组，然后注册到模型仓库。";
    let all = tasks(text);
    // The heading is no training of its own.
    assert_eq!(all.iter().filter(|t| t.kind.trains()).count(), 1, "{all:?}");
    assert_eq!(width(&all), Some(6));
    assert_eq!(sweep(text).0, "n_estimator_max_depth");
    assert_eq!(names(text).len(), 4);
}
