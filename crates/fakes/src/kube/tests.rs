use super::*;

#[test]
fn merge_patch_follows_rfc_7386() {
    let mut doc = json!({"a": "b", "c": {"d": "e", "f": "g"}});
    merge_patch(&mut doc, &json!({"a": "z", "c": {"f": null}}));
    assert_eq!(doc, json!({"a": "z", "c": {"d": "e"}}));
}

#[tokio::test]
async fn watches_resume_from_a_version() {
    let store = Store::default();
    let res = Resource::new("argoproj.io", "v1alpha1", "workflows");
    let a = store
        .create(&res, "ns", json!({"metadata": {"name": "a"}}))
        .unwrap();
    let after_a: u64 = a["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    store.update(&res, "ns", "a", |o| {
        o["status"] = json!({"phase": "Running"})
    });
    let mut events = store.watch(&res, Some("ns"), Some(after_a));
    let (_, e) = events.recv().await.unwrap();
    assert_eq!(
        (e.kind, e.object["status"]["phase"].as_str()),
        (EventType::Modified, Some("Running"))
    );
    store.delete(&res, "ns", "a");
    assert_eq!(events.recv().await.unwrap().1.kind, EventType::Deleted);
    assert!(store.create(&res, "ns", json!({"metadata": {}})).is_err());
    let named = store
        .create(&res, "ns", json!({"metadata": {"generateName": "x-"}}))
        .unwrap();
    assert!(
        named["metadata"]["name"]
            .as_str()
            .unwrap()
            .starts_with("x-")
    );
}
