"""The tasks on short documents (3 to 7 sections), written by hand.

Section numbers in `targets` and in the checks are the indexes of the document's top-level
blocks as written here (Redline keeps one section per block). tasks/__init__.py describes the
fields and the checks.
"""

MEMO = """\
<h1>Quarterly update</h1>
<p>Acme Corp grew revenue by 12% this quarter, driven by strong sales in France and Belgium.</p>
<p>The new office in Lyon opened in May with 40 staff. Recruitment for the support team continues through the summer.</p>
<p>Next quarter, Acme Corp will focus on the retail market. The board of Acme Corp meets on 14 October to approve the plan; questions go to Mariana Silva.</p>
"""

SHOPPING = """\
<h2>Shopping list for Saturday</h2>
<ul><li>Apples</li><li>Bread</li><li>Milk</li><li>Coffee beans</li></ul>
<p>Remember to bring the reusable bags.</p>
"""

PRICING = """\
<h2>Plans and prices</h2>
<p>All prices are per user per month, billed annually.</p>
<table><tr><th>Plan</th><th>Price</th><th>Support</th></tr><tr><td>Basic</td><td>$9</td><td>Email</td></tr><tr><td>Standard</td><td>$19</td><td>Email and chat</td></tr><tr><td>Premium</td><td>$39</td><td>Phone, 24/7</td></tr></table>
<p>Prices exclude VAT. Discounts are available for charities and schools.</p>
"""

FALCON = """\
<h1>Project Falcon</h1>
<h2>Background</h2>
<p>The warehouse scanners are eight years old and fail about once a week. Replacement parts are no longer made.</p>
<h2>Proposal</h2>
<p>Replace all 120 scanners with rugged tablets in two phases, starting with the night shift. The deadline for the first phase is 30 June.</p>
<p>Next steps</p>
<p>Ask three suppliers for quotes and book a trial with the night shift team.</p>
"""

READING = """\
<h2>Reading list for new engineers</h2>
<p>Start with The Pragmatic Programmer, then read Designing Data-Intensive Applications when you join the platform team.</p>
<p>For questions about the list, see our website or ask in the #learning channel.</p>
<p><strong>Urgent:</strong> the library card scheme closes on Friday.</p>
"""

OFFSITE = """\
<h1>Team offsite</h1>
<p>The offsite takes place on 12 September in Room 4B of the Harbour Building.</p>
<p>Lunch is served at 12:30. Please tell Jonas about any dietary needs by Friday.</p>
<p>The old VPN will be switched off on 1 September, so test the new one before you travel.</p>
<p>Reminder: bring your laptop charger to Room 4B, as there are no spare chargers.</p>
<p>The old VPN configuration guide is no longer maintained; do not share it with new staff.</p>
"""

DELIVERY = """\
<h2>Delivery policy</h2>
<p>Customers will recieve their order within five working days. Orders placed after 14:00 ship the next day.</p>
<p>Returns are accepted within 30 days of delivery if the item is unused and in its original packaging.</p>
"""

COMITE = """\
<h1>Réunion du comité</h1>
<p>La réunion aura lieu à Zürich le 3 février, à l'hôtel Bellevue.</p>
<p>Les participants arriveront à Zürich la veille ; le dîner est prévu à 19 h 30.</p>
<p>Merci de confirmer votre présence à Hélène Dubois avant le 20 janvier.</p>
"""

PLAN_ZH = """\
<h1>项目计划</h1>
<p>第一阶段将在三月底完成，负责人是王伟。</p>
<p>第二阶段包括用户测试，预计持续六周。</p>
<p>如有问题，请联系王伟或发邮件至 team@example.cn。</p>
"""

TRIP_JA = """\
<h2>出張のご案内</h2>
<p>集合場所は東京駅の丸の内北口です。</p>
<p>新幹線は午前9時に出発します。</p>
"""

MEETING_AR = """\
<h2 dir="rtl">جدول الاجتماع</h2>
<p dir="rtl">سيعقد الاجتماع يوم الأحد في القاهرة الساعة العاشرة صباحا.</p>
<p dir="rtl">يرجى إحضار التقرير المالي للربع الثالث.</p>
"""

NOTICE_HE = """\
<h2 dir="rtl">הודעה לצוות</h2>
<p dir="rtl">הפגישה הבאה תתקיים בחיפה ביום שלישי.</p>
<p dir="rtl">נא להביא מחשב נייד ומטען.</p>
"""

SUPPLY = """\
<h2>Supply agreement summary</h2>
<p>Supplier: Nordic Pumps AB. Contract number: [CONTRACT NO].</p>
<p>The agreement covers spare parts and on-site repairs for all pump stations.</p>
"""

SUPPLY_TERMS = {
    "filename": "supplier_terms.txt",
    "text": """Nordic Pumps AB: Terms of supply

Contract number: NP-2291-B
Effective date: 1 April 2025

Warranty. All pumps and spare parts supplied under this agreement carry a warranty of 36 months from delivery. The warranty does not cover wear parts such as seals and impeller rings.

Response times. For urgent call-outs the supplier attends within 4 hours, day or night. Routine repairs are scheduled within 5 working days of the request.

Delivery. Parts are delivered to the central stores at 14 Quay Street, Harbourside, between 07:00 and 15:00 on working days.

Prices. Prices are fixed for the first two years and then follow the producer price index, adjusted every April.
""",
}

TASKS = [
    # --- replace throughout -------------------------------------------------------------------
    dict(id="memo-rename", category="replace throughout", smoke=True, doc=MEMO,
         request="Rename Acme Corp to Globex Ltd throughout the document.",
         targets=[1, 3], changes=2,
         checks=[{"absent": "Acme"}, {"count": ["Globex Ltd", 3]}]),
    dict(id="offsite-room", category="several sections", doc=OFFSITE,
         request="The offsite moved from Room 4B to Room 7A. Update both places where the room is mentioned.",
         targets=[1, 4], changes=2,
         checks=[{"absent": "Room 4B"}, {"count": ["Room 7A", 2]}]),
    dict(id="offsite-delete-vpn", category="several sections", doc=OFFSITE,
         request="Delete both paragraphs about the old VPN.",
         targets=[3, 5], changes=2,
         checks=[{"deleted": 3}, {"deleted": 5}, {"absent": "VPN"}]),
    # --- local rewrite ------------------------------------------------------------------------
    dict(id="memo-month", category="local rewrite", doc=MEMO,
         request="The Lyon office opened in June, not May. Fix that.",
         targets=[2], changes=1,
         checks=[{"section": 2, "present": "June"}, {"section": 2, "absent": "May"},
                 {"section": 2, "present": "40 staff"}]),
    dict(id="delivery-typo", category="local rewrite", smoke=True, doc=DELIVERY,
         request="Fix the spelling mistake in the first paragraph.",
         targets=[1], changes=1,
         checks=[{"section": 1, "present": "Customers will receive their order within five working days."},
                 {"absent": "recieve"}]),
    dict(id="delivery-returns", category="local rewrite", doc=DELIVERY,
         request="Change the returns period from 30 days to 60 days.",
         targets=[2], changes=1,
         checks=[{"section": 2, "present": "60 days"}, {"section": 2, "absent": "30 days"}]),
    # --- insert before / after ----------------------------------------------------------------
    dict(id="memo-insert-after", category="insert", smoke=True, doc=MEMO,
         request="Add a new paragraph after the one about the Lyon office: "
                 "\"A second office in Porto will open in January.\"",
         targets=[], changes=1,
         checks=[{"new": "A second office in Porto will open in January", "after": 2, "before": 3}]),
    dict(id="memo-insert-top", category="insert", doc=MEMO,
         request="Insert a paragraph at the very top of the document, before the heading, that says "
                 "\"Draft: not for circulation.\"",
         targets=[], changes=1,
         checks=[{"new": "Draft: not for circulation", "after": None, "before": 0}]),
    # --- delete -------------------------------------------------------------------------------
    dict(id="memo-delete", category="delete", smoke=True, doc=MEMO,
         request="Delete the paragraph about the new office in Lyon.",
         targets=[2], changes=1,
         checks=[{"deleted": 2}, {"absent": "Lyon"}]),
    # --- list items ---------------------------------------------------------------------------
    dict(id="list-add", category="list items", smoke=True, doc=SHOPPING,
         request="Add Bananas to the shopping list.",
         targets=[1], changes=1,
         checks=[{"list": 1, "items": ["Apples", "Bread", "Milk", "Coffee beans", "Bananas"]}]),
    dict(id="list-remove", category="list items", doc=SHOPPING,
         request="Take Milk off the list.",
         targets=[1], changes=1,
         checks=[{"list": 1, "items": ["Apples", "Bread", "Coffee beans"]}]),
    dict(id="list-insert-after-item", category="list items", doc=SHOPPING,
         request="Add Eggs to the list, right after Bread.",
         targets=[1], changes=1,
         checks=[{"list": 1, "items": ["Apples", "Bread", "Eggs", "Milk", "Coffee beans"]}]),
    # --- table cells --------------------------------------------------------------------------
    dict(id="table-price", category="table cells", smoke=True, doc=PRICING,
         request="Change the price of the Standard plan to $24.",
         targets=[2], changes=1,
         checks=[{"cell": [2, 2, 1], "text": "$24"}, {"cell": [2, 1, 1], "text": "$9"},
                 {"cell": [2, 3, 1], "text": "$39"}, {"absent": "$19"}]),
    dict(id="table-price-asked", category="table cells", doc=PRICING,
         request="Could you change the price of the Premium plan to $45?",
         targets=[2], changes=1,
         checks=[{"cell": [2, 3, 1], "text": "$45"}, {"cell": [2, 2, 1], "text": "$19"}, {"absent": "$39"}]),
    dict(id="list-add-asked", category="list items", doc=SHOPPING,
         request="Can you add Tea to the shopping list?",
         targets=[1], changes=1,
         checks=[{"list": 1, "items": ["Apples", "Bread", "Milk", "Coffee beans", "Tea"]}]),
    dict(id="table-support", category="table cells", doc=PRICING,
         request="In the table, change the support of the Basic plan from Email to "
                 "\"Email and community forum\".",
         targets=[2], changes=1,
         checks=[{"cell": [2, 1, 2], "text": "Email and community forum"},
                 {"cell": [2, 2, 2], "text": "Email and chat"}]),
    dict(id="table-add-row", category="table cells", doc=PRICING,
         request="Add a row at the end of the table for an Enterprise plan at $79 with "
                 "\"Dedicated account manager\" as its support.",
         targets=[2], changes=1,
         checks=[{"rows": [2, 5]}, {"cell": [2, 4, 0], "text": "Enterprise"}, {"cell": [2, 4, 1], "text": "$79"},
                 {"cell": [2, 4, 2], "text": "Dedicated account manager"}, {"cell": [2, 3, 0], "text": "Premium"}]),
    # --- headings -----------------------------------------------------------------------------
    dict(id="heading-rename", category="headings", smoke=True, doc=FALCON,
         request="Rename the heading \"Background\" to \"Context\".",
         targets=[1], changes=1,
         checks=[{"heading": "Context", "level": 2}, {"absent": "Background"}]),
    dict(id="heading-promote", category="headings", doc=FALCON,
         request="The line \"Next steps\" should be a level-2 heading like \"Proposal\".",
         targets=[5], changes=1,
         checks=[{"heading": "Next steps", "level": 2}]),
    # --- bold / italic / links ----------------------------------------------------------------
    dict(id="bold-deadline", category="bold/italic/links", doc=FALCON,
         request="Make the word \"deadline\" bold in the Proposal section.",
         targets=[4], changes=1,
         checks=[{"tag": ["strong", "b"], "text": "deadline", "section": 4},
                 {"section": 4, "present": "The deadline for the first phase is 30 June."}]),
    dict(id="italic-title", category="bold/italic/links", doc=READING,
         request="Put the book title \"The Pragmatic Programmer\" in italics.",
         targets=[1], changes=1,
         checks=[{"tag": ["em", "i"], "text": "The Pragmatic Programmer", "section": 1},
                 {"section": 1, "present": "Start with The Pragmatic Programmer, then read"}]),
    dict(id="link-website", category="bold/italic/links", doc=READING,
         request="Turn the words \"our website\" into a link to https://example.org/learning.",
         targets=[2], changes=1,
         checks=[{"link": "https://example.org/learning", "text": "our website"},
                 {"section": 2, "present": "For questions about the list, see our website or ask"}]),
    dict(id="unbold-urgent", category="bold/italic/links", doc=READING,
         request="Remove the bold formatting from \"Urgent:\" in the last paragraph.",
         targets=[3], changes=1,
         checks=[{"no_tag": ["strong", "b"], "section": 3},
                 {"section": 3, "present": "Urgent: the library card scheme closes on Friday."}]),
    # --- questions ----------------------------------------------------------------------------
    dict(id="memo-question", category="questions", smoke=True, kind="question", doc=MEMO,
         request="By how much did revenue grow this quarter?",
         checks=[{"answer": ["12%", "12 %", "12 percent", "twelve percent"]}]),
    dict(id="list-question", category="questions", kind="question", doc=SHOPPING,
         request="How many items are on the shopping list?",
         checks=[{"answer": ["4", "four"]}]),
    dict(id="table-question", category="questions", kind="question", doc=PRICING,
         request="Which plan includes phone support?",
         checks=[{"answer": "Premium"}]),
    dict(id="falcon-question", category="questions", kind="question", doc=FALCON,
         request="When is the deadline for the first phase?",
         checks=[{"answer": ["30 June", "June 30"]}]),
    dict(id="offsite-question", category="questions", kind="question", doc=OFFSITE,
         request="Who should I tell about dietary needs?",
         checks=[{"answer": "Jonas"}]),
    # --- requests that cannot be done ---------------------------------------------------------
    dict(id="memo-email", category="impossible", kind="impossible", doc=MEMO,
         request="Email this update to the whole sales team."),
    dict(id="offsite-missing-word", category="impossible", kind="impossible", doc=OFFSITE,
         request="Replace \"Zanzibar\" with \"Madagascar\" everywhere in the document."),
    dict(id="pricing-no-attachment", category="impossible", kind="impossible", doc=PRICING,
         request="Update the prices in the table from the spreadsheet I attached."),
    # --- beyond ASCII -------------------------------------------------------------------------
    dict(id="fr-replace", category="beyond ASCII", doc=COMITE,
         request="Replace Zürich with Genève everywhere.",
         targets=[1, 2], changes=2,
         checks=[{"absent": "Zürich"}, {"count": ["Genève", 2]}, {"section": 1, "present": "à Genève le 3 février"}]),
    dict(id="fr-time", category="beyond ASCII", doc=COMITE,
         request="Le dîner aura lieu à 20 h 00 au lieu de 19 h 30. Corrige le document.",
         targets=[2], changes=1,
         checks=[{"section": 2, "present": "20 h"}, {"section": 2, "absent": "19 h 30"},
                 {"section": 2, "present": "Les participants arriveront à Zürich la veille"}]),
    dict(id="fr-question", category="beyond ASCII", kind="question", doc=COMITE,
         request="Qui faut-il prévenir pour confirmer sa présence ?",
         checks=[{"answer": "Hélène"}]),
    dict(id="zh-replace", category="beyond ASCII", doc=PLAN_ZH,
         request="Change the person in charge from 王伟 to 李娜 everywhere in the document.",
         targets=[1, 3], changes=2,
         checks=[{"absent": "王伟"}, {"count": ["李娜", 2]}, {"section": 3, "present": "team@example.cn"}]),
    dict(id="zh-question", category="beyond ASCII", kind="question", doc=PLAN_ZH,
         request="第二阶段预计持续多久？",
         checks=[{"answer": ["六周", "6周", "6 周", "six weeks", "6 weeks"]}]),
    dict(id="ja-append", category="beyond ASCII", doc=TRIP_JA,
         request="Add a paragraph at the end of the document that says: 昼食は各自でお願いします。",
         targets=[], changes=1,
         checks=[{"new": "昼食は各自でお願いします", "after": 2, "before": None}]),
    dict(id="ar-replace", category="beyond ASCII", doc=MEETING_AR,
         request="Replace القاهرة with الإسكندرية in the document.",
         targets=[1], changes=1,
         checks=[{"absent": "القاهرة"}, {"section": 1, "present": "في الإسكندرية الساعة العاشرة"}]),
    dict(id="he-question", category="beyond ASCII", kind="question", doc=NOTICE_HE,
         request="In which city is the next meeting?",
         checks=[{"answer": ["חיפה", "Haifa"]}]),
    dict(id="he-delete", category="beyond ASCII", doc=NOTICE_HE,
         request="Delete the paragraph that asks people to bring a laptop.",
         targets=[2], changes=1,
         checks=[{"deleted": 2}, {"absent": "מחשב"}]),
    # --- attachments --------------------------------------------------------------------------
    dict(id="att-question", category="attachments", kind="question", doc=SUPPLY, attachment=SUPPLY_TERMS,
         request="According to the attached supplier terms, how long is the warranty?",
         checks=[{"answer": ["36 months", "36-month", "three years", "3 years"]}]),
    dict(id="att-fill", category="attachments", doc=SUPPLY, attachment=SUPPLY_TERMS,
         request="Fill in the contract number from the attached terms in place of [CONTRACT NO].",
         targets=[1], changes=1,
         checks=[{"section": 1, "present": "NP-2291-B"}, {"absent": "[CONTRACT NO]"},
                 {"section": 1, "present": "Supplier: Nordic Pumps AB."}]),
    dict(id="att-append", category="attachments", doc=SUPPLY, attachment=SUPPLY_TERMS,
         request="Add a paragraph at the end stating the response time for urgent call-outs, "
                 "taken from the attached terms.",
         targets=[], changes=1,
         checks=[{"new": ["4 hours", "four hours"], "after": 2, "before": None}]),
]
