"""The sizing run: each configuration's measured costs (costs, spreads) into a proposal (plan), the
proposal started and proved (prove), all of it after the lab's shapes (lab). It stands above the
shapes and the results' assembly it reads; the model and the search it uses (labtester/sizing/)
stand below the shapes, which answer with them."""
