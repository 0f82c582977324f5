from hansa.tasks.builtin.audit import audit_html


def test_a_thin_page_without_meta_gets_findings_and_a_lower_score() -> None:
    report = audit_html("Services", "<h1>Services</h1><p>We fix water.</p>")
    codes = {f["code"] for f in report["findings"]}
    assert {"missing_meta_description", "thin_content", "no_links"} <= codes
    assert report["wordCount"] == 4 and report["h1"] == "Services"
    assert report["score"] < 100


def test_a_complete_page_scores_well() -> None:
    words = " ".join(["water"] * 320)
    html = (
        '<meta name="description" content="Water softener installation and repair for homes '
        'across Quebec, done in a day.">'
        f'<h1>Services</h1><h2>Repair</h2><p>{words}</p><a href="/contact">Contact</a>'
        '<img src="a.png" alt="A softener">'
    )
    report = audit_html("Services", html)
    assert report["findings"] == []
    assert report["score"] == 100
    assert report["headings"] == {"h1": 1, "h2": 1}


def test_several_h1_and_images_without_alt_are_reported() -> None:
    report = audit_html("T", "<h1>a</h1><h1>b</h1><img src=x>")
    codes = {f["code"] for f in report["findings"]}
    assert {"several_h1", "images_without_alt"} <= codes
