"""One vocabulary between fitting and scoring: the names of the posterior's variables,
dimensions and moves, and the domain each variable lives in."""

#: the walk's moves after an examination (``walk`` variable, dim ``move``), in this order
MOVES = ("forward", "backward", "reformulate", "stop")


#: the walk's boundary rules at a page's last rank: ``leave`` (P@H's walk: the forward mass
#: leaves) and ``rescale`` (MsM's session walk, Algorithm 1 of the MsM paper)
BOUNDARIES = ("leave", "rescale")


#: relevance classes of the examined document (``drwbm``: moves after examining a
#: relevant document differ from moves after examining any other)
CLASSES = ("non-relevant", "relevant")


#: variables whose rows along a dimension are probability distributions (sum to 1)
SIMPLEX = {"walk": "move", "walk_skip": "move", "walk_click": "move",
           "transition": "category", "jump": "to_rank"}


#: variables that are probabilities
PROBABILITIES = ("walk", "walk_skip", "walk_click", "transition", "jump", "click", "repeat",
                 "attractiveness", "pooled_click", "reclick", "second_look")


#: variables that are positive (rates, scales)
POSITIVE = ("holding_rate", "log_dwell_sd", "jump_exponent", "reader_spread")


#: readers by query (``[examination] readers = "query"``): ``reader_effect`` shifts, for
#: each reader (dim ``reader``, coords: the query it reads, ``(others)`` first), the
#: logits of these families (dim ``reader_logit``: the free moves against leaving, the
#: next query against the end, the immediate repeat), ``reader_spread`` is the sd of the
#: effects on each; the posterior's ``walk`` and ``repeat`` are the first reader's
READER_LOGITS = ("forward", "backward", "continue", "repeat")


#: the dims (after ``chain, draw``) of the variables scoring reads, by variable; a walk by
#: relevance adds a leading ``relevance`` dim (:data:`CLASSES`) to the walk's variables.
#: A walk whose moves depend on the click keeps them (``walk_skip``: after an examination
#: without a click, ``walk_click``: after a click) beside ``walk``, the walk over ranks
#: they make with the clicks marginalised (what the walk measures score)
DIMS = {"walk": ("rank", "move"), "walk_skip": ("rank", "move"),
        "walk_click": ("rank", "move"), "click": ("rank",), "repeat": ("rank",),
        "attractiveness": ("document",), "pooled_click": ("pooled_rank",),
        "click_trend": ("trend",),
        "click_offset": ("rank",), "reclick": (), "second_look": (),
        "reader_effect": ("reader", "reader_logit"), "reader_spread": ("reader_logit",),
        "transition": ("rank", "category"), "jump": ("rank", "to_rank"),
        "jump_exponent": (), "holding_rate": ("rank",), "log_dwell_mean": ("rank",),
        "log_dwell_sd": ("rank",)}
