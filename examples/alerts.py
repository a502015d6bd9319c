"""The keyed processor of examples/payment_alerts.toml: an alert when a payment is more than ten
times the mean of the account's last five payments of the past day.

Its one state, the last five amounts, has its deadline: an amount is forgotten a day (of event
time) after it was written, and the list keeps five at most (the oldest goes first), so an
account that stops paying leaves nothing behind.
"""

from datetime import timedelta

from streamwarden import KeyedProcessor, ListState


class BigPaymentAlert(KeyedProcessor):
    output = "account STRING, at TIMESTAMP, amount DOUBLE, mean_before DOUBLE"
    last = ListState(
        "amount DOUBLE", expire_after=timedelta(days=1), max_items=5, when_full="drop_oldest"
    )

    def process(self, key, events, ctx):  # this key's events of the batch, in event-time order
        for e in events:
            amounts = self.last.get()
            if len(amounts) == 5 and e.amount > 10 * (sum(amounts) / 5):
                ctx.emit(account=key, at=e.at, amount=e.amount, mean_before=sum(amounts) / 5)
            self.last.append(e.amount)
