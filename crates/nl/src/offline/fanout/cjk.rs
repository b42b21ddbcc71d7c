//! Chinese fan-outs: values between 、 ("对北京、上海、广州5个城市分别 …"),
//! and a count of things each given a run ("对 20 个城市每个城市各跑一次").

use super::super::lexicon::{CLASSIFIERS, integer_at};
use super::super::reader::Reader;
use super::super::scan::{Class, Token, is_cjk, phrase_at};
use crate::decompose::{FanOut, FanOutValues};

/// "对 us、eu、asia 每个区域训练": the values before 每个.
pub(super) fn chinese_each(r: &mut Reader) -> Option<FanOut> {
    let t = r.t;
    let each = (0..t.len()).find(|&i| {
        ["每个", "每一个", "每一", "各个", "分别"]
            .iter()
            .any(|p| phrase_at(t, i, p).is_some())
    })?;
    let mut start = each;
    while start > 0
        && (matches!(t[start - 1].class, Class::Word | Class::Number | Class::Url)
            || t[start - 1].is("、"))
    {
        start -= 1;
    }
    let mut values: Vec<String> = t[start..each]
        .iter()
        .filter(|x| matches!(x.class, Class::Word | Class::Number | Class::Url))
        .map(|x| x.text.clone())
        .collect();
    // "learning rate 分别取 0.1、0.01": the words name what varies, the
    // numbers after "分别" are its values (the list reader's).
    let numbers_after = t[each..t.len().min(each + 6)]
        .iter()
        .position(|x| x.class == Class::Number)
        .is_some_and(|k| t.get(each + k + 1).is_some_and(|x| x.is("、")));
    if numbers_after && values.iter().all(|v| v.parse::<f64>().is_err()) {
        return None;
    }
    // "对北京、上海、广州5个城市分别 …": Chinese values between 、, the
    // count and what is counted after the last one.
    if values.len() < 2
        && let Some((from, listed)) = cjk_list_before(t, each)
    {
        start = from;
        values = listed;
    } else if values.len() < 2
        && let Some((from, to, listed)) = cjk_list_after(t, each)
    {
        r.mark(from, to - from);
        values = listed;
    }
    // "learning rate 0.1、0.01、0.001": the numbers vary, the words name them.
    if values.iter().any(|v| v.parse::<f64>().is_ok()) {
        let numbers = values
            .iter()
            .rev()
            .take_while(|v| v.parse::<f64>().is_ok())
            .count();
        values.drain(..values.len() - numbers);
    }
    // "每个地区（华东、华北、华南）": the values in brackets after it.
    if values.len() < 2 {
        let open = (each..(each + 6).min(t.len())).find(|&k| t[k].is("（") || t[k].is("("))?;
        let close = (open..t.len()).find(|&k| t[k].is("）") || t[k].is(")"))?;
        values = t[open + 1..close]
            .split(|x| x.is("、") || x.is("，") || x.is(","))
            .map(|chunk| chunk.iter().map(|x| x.text.as_str()).collect::<String>())
            .filter(|v| !v.is_empty())
            .collect();
        start = start.min(each);
    }
    if values.len() < 2 {
        return None;
    }
    let noun: String = t[each..(each + 5).min(t.len())]
        .iter()
        .filter(|x| x.class == Class::Cjk)
        .map(|x| x.text.as_str())
        .collect();
    let parameter = [
        ("区域", "region"),
        ("地区", "region"),
        ("文件", "file"),
        ("人", "name"),
        ("模型", "model"),
    ]
    .iter()
    .find(|(zh, _)| noun.contains(zh))
    .map_or("item", |(_, en)| en)
    .to_owned();
    r.mark(start, each - start + 2);
    Some(FanOut {
        parameter,
        values: FanOutValues::List(values),
    })
}

/// The 、-separated values that end at `end` ("北京、上海、杭州5个城市"):
/// where they start and each value without the count after the last.
fn cjk_list_before(t: &[Token], end: usize) -> Option<(usize, Vec<String>)> {
    let opener = (0..end)
        .rev()
        .find(|&k| {
            ["对", "把", "给", "在", "，", ",", "：", ":"]
                .iter()
                .any(|w| t[k].is(w))
        })
        .map_or(0, |k| k + 1);
    cjk_values(t, opener, end).map(|values| (opener, values))
}

/// The 、-separated values after "分别" and its verb ("分别部署到北京、上海、
/// 新加坡三个机房"): where they start and end, and each value.
fn cjk_list_after(t: &[Token], each: usize) -> Option<(usize, usize, Vec<String>)> {
    let end = (each..t.len())
        .find(|&k| ["，", ",", "。", "；", ";"].iter().any(|w| t[k].is(w)))
        .unwrap_or(t.len());
    let first = (each..end).find(|&k| t[k].is("、"))?;
    let opener = (each..first).rev().find(|&k| {
        ["到", "在", "给", "对", "用", "于", "为"]
            .iter()
            .any(|w| t[k].is(w))
    })? + 1;
    cjk_values(t, opener, end).map(|values| (opener, end, values))
}

/// The values between 、 in `t[start..end]`, without the count after the
/// last one.
fn cjk_values(t: &[Token], start: usize, end: usize) -> Option<Vec<String>> {
    let chunks: Vec<&[Token]> = t[start..end].split(|x| x.is("、")).collect();
    if chunks.len() < 2 {
        return None;
    }
    let mut values: Vec<String> = Vec::new();
    for chunk in chunks {
        // The last value ends where its count starts ("杭州5个城市", "四川话三个测试集").
        let cut = (0..chunk.len())
            .find(|&k| {
                integer_at(chunk, k, true).is_some_and(|(_, n)| {
                    CLASSIFIERS
                        .iter()
                        .any(|c| chunk.get(k + n).is_some_and(|x| x.is(c)))
                })
            })
            .unwrap_or(chunk.len());
        let value: String = chunk[..cut]
            .iter()
            .map(|x| x.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        // (Chinese characters join without spaces.)
        let value = value.split(' ').fold(String::new(), |mut acc, w| {
            let cjk = w.chars().next().is_some_and(is_cjk);
            let last_cjk = acc.chars().last().is_some_and(is_cjk);
            if !(acc.is_empty() || (cjk && last_cjk)) {
                acc.push(' ');
            }
            acc.push_str(w);
            acc
        });
        if value.is_empty() || value.chars().count() > 12 {
            return None;
        }
        values.push(value);
    }
    Some(values)
}

/// Words that say each thing counted gets its own run.
const CJK_EACH: &[&str] = &[
    "分别",
    "每个",
    "每一个",
    "每一",
    "各自",
    "逐个",
    "逐一",
    "各",
    "每张",
    "每条",
    "每份",
    "每类",
];

/// "对 20 个城市每个城市各跑一次", "对100个测试问题分别生成答案", "给 200 个
/// SKU 各自做预测": a count of things, then a word saying each gets a run.
pub(super) fn chinese_count(r: &mut Reader) -> Option<FanOut> {
    let t = r.t;
    let each = (0..t.len()).find(|&i| CJK_EACH.iter().any(|p| phrase_at(t, i, p).is_some()))?;
    for i in 0..t.len().min(each + 6) {
        if r.used[i] {
            continue;
        }
        let Some((v, n)) = integer_at(t, i, true) else {
            continue;
        };
        if v < 2 || !CLASSIFIERS.iter().any(|c| r.is(i + n, &[c])) {
            continue;
        }
        // ("用4张卡", "内存32G": resources, not things to run for.)
        let resource = ["卡", "gpu", "gpus"].iter().any(|w| r.is(i + n + 1, &[w]));
        if resource {
            continue;
        }
        r.mark(i, n + 1);
        return Some(FanOut {
            parameter: "item".to_owned(),
            values: FanOutValues::Count(v),
        });
    }
    None
}
