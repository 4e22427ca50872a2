"""Recurrent layers (src/symbolics/rnn.cpp)."""
import os
import sys
from typing import List, Optional

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape):
    return torch.randn(*shape)


def seeded(m, seed=0):
    torch.manual_seed(seed)
    for p in m.parameters():
        nn.init.uniform_(p, -0.6, 0.6)
    return m


class WithHidden(nn.Module):
    """rnn(x, h0) (LSTM: (h0, c0)); returns output and the final states."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h, c: Optional[torch.Tensor] = None):
        if c is not None:
            y, (hn, cn) = self.rnn(x, (h, c))
            return y, hn, cn
        y, hn = self.rnn(x, h)
        return y, hn


class ScriptedLSTM(nn.Module):
    """A model holding an LSTM, scripted: forward reads rnn._flat_weights."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h, c):
        y, (hn, cn) = self.rnn(x, (h, c))
        return y, hn, cn


class ScriptedRNN(nn.Module):
    """A model holding a GRU or an RNN, scripted; h0 optional."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h: Optional[torch.Tensor] = None):
        y, hn = self.rnn(x, h)
        return y, hn


class Packed(nn.Module):
    """pack_padded_sequence -> rnn -> pad_packed_sequence."""

    def __init__(self, rnn, batch_first=False, enforce_sorted=True, total_length=None, padding_value=0.0):
        super().__init__()
        self.rnn = rnn
        self.batch_first = batch_first
        self.enforce_sorted = enforce_sorted
        self.total_length = total_length
        self.padding_value = padding_value

    def forward(self, x, lengths, *hidden):
        p = pack_padded_sequence(x, lengths, batch_first=self.batch_first, enforce_sorted=self.enforce_sorted)
        if hidden:
            y, h = self.rnn(p, hidden[0] if len(hidden) == 1 else tuple(hidden))
        else:
            y, h = self.rnn(p)
        out, lens = pad_packed_sequence(y, batch_first=self.batch_first, padding_value=self.padding_value,
                                        total_length=self.total_length)
        return out, h, lens


class LSTMCellScript(nn.Module):
    def __init__(self, bias: bool):
        super().__init__()
        self.cell = seeded(nn.LSTMCell(3, 5, bias=bias))

    def forward(self, x, h, c):
        return torch.lstm_cell(x, [h, c], self.cell.weight_ih, self.cell.weight_hh, self.cell.bias_ih,
                               self.cell.bias_hh)


class GRUCellScript(nn.Module):
    def __init__(self, bias: bool):
        super().__init__()
        self.cell = seeded(nn.GRUCell(3, 5, bias=bias))

    def forward(self, x, h):
        return torch.gru_cell(x, h, self.cell.weight_ih, self.cell.weight_hh, self.cell.bias_ih, self.cell.bias_hh)


class RNNCellScript(nn.Module):
    def __init__(self, relu: bool, bias: bool):
        super().__init__()
        self.relu = relu
        self.cell = seeded(nn.RNNCell(3, 5, bias=bias, nonlinearity="relu" if relu else "tanh"))

    def forward(self, x, h):
        if self.relu:
            return torch.rnn_relu_cell(x, h, self.cell.weight_ih, self.cell.weight_hh, self.cell.bias_ih,
                                       self.cell.bias_hh)
        return torch.rnn_tanh_cell(x, h, self.cell.weight_ih, self.cell.weight_hh, self.cell.bias_ih,
                                   self.cell.bias_hh)


x = r(6, 3, 4)     # (seq, batch, feature)
xb = r(3, 6, 4)    # (batch, seq, feature)
lengths = torch.tensor([6, 4, 2])
unsorted = torch.tensor([2, 6, 5])
PROJ = {9: "LSTM with projections (proj_size > 0) cannot be exported", 17: "LSTM with projections"}

CASES = [
    # ---- LSTM
    Case("lstm", seeded(nn.LSTM(4, 5)), (x,)),
    Case("lstm_2_layers", seeded(nn.LSTM(4, 5, num_layers=2)), (x,)),
    Case("lstm_3_layers_bidirectional", seeded(nn.LSTM(4, 3, num_layers=3, bidirectional=True)), (x,)),
    Case("lstm_bidirectional_batch_first", seeded(nn.LSTM(4, 5, bidirectional=True, batch_first=True)), (xb,)),
    Case("lstm_no_bias", seeded(nn.LSTM(4, 5, bias=False, num_layers=2)), (x,)),
    Case("lstm_hidden", WithHidden(seeded(nn.LSTM(4, 5, num_layers=2, bidirectional=True))),
         (x, r(4, 3, 5), r(4, 3, 5))),
    Case("lstm_hidden_batch_first", WithHidden(seeded(nn.LSTM(4, 5, batch_first=True))), (xb, r(1, 3, 5), r(1, 3, 5))),
    Case("lstm_unbatched", seeded(nn.LSTM(4, 5, num_layers=2)), (r(6, 4),)),
    Case("lstm_unbatched_hidden", WithHidden(seeded(nn.LSTM(4, 5, bidirectional=True))), (r(6, 4), r(2, 5), r(2, 5))),
    Case("lstm_dropout_eval", seeded(nn.LSTM(4, 5, num_layers=2, dropout=0.5)), (x,)),
    Case("lstm_proj_size", seeded(nn.LSTM(4, 5, proj_size=3)), (x,), opsets=(), error_below=PROJ),
    # ---- GRU (ONNX GRU with linear_before_reset=1)
    Case("gru", seeded(nn.GRU(4, 5)), (x,)),
    Case("gru_2_layers_bidirectional", seeded(nn.GRU(4, 5, num_layers=2, bidirectional=True)), (x,)),
    Case("gru_batch_first_no_bias", seeded(nn.GRU(4, 5, batch_first=True, bias=False)), (xb,)),
    Case("gru_hidden", WithHidden(seeded(nn.GRU(4, 5, num_layers=3))), (x, r(3, 3, 5))),
    Case("gru_unbatched", seeded(nn.GRU(4, 5, bidirectional=True)), (r(6, 4),)),
    # ---- RNN tanh / relu
    Case("rnn_tanh", seeded(nn.RNN(4, 5)), (x,)),
    Case("rnn_tanh_bidirectional_2_layers", seeded(nn.RNN(4, 5, num_layers=2, bidirectional=True)), (x,)),
    Case("rnn_relu", seeded(nn.RNN(4, 5, nonlinearity="relu")), (x,)),
    Case("rnn_relu_batch_first_hidden", WithHidden(seeded(nn.RNN(4, 5, nonlinearity="relu", batch_first=True,
                                                                 num_layers=2, bias=False))), (xb, r(2, 3, 5))),
    Case("rnn_relu_unbatched", seeded(nn.RNN(4, 5, nonlinearity="relu", bidirectional=True)), (r(6, 4),)),
    # ---- packed sequences: _pack_padded_sequence -> lstm/gru/rnn .data -> _pad_packed_sequence
    Case("lstm_packed", Packed(seeded(nn.LSTM(4, 5))), (x, lengths)),
    Case("lstm_packed_batch_first_bidirectional",
         Packed(seeded(nn.LSTM(4, 5, batch_first=True, bidirectional=True, num_layers=2)), batch_first=True),
         (xb, lengths)),
    Case("lstm_packed_unsorted", Packed(seeded(nn.LSTM(4, 5, bidirectional=True)), enforce_sorted=False),
         (x, unsorted)),
    Case("lstm_packed_hidden", Packed(seeded(nn.LSTM(4, 5))), (x, lengths, r(1, 3, 5), r(1, 3, 5))),
    Case("lstm_packed_padding_value", Packed(seeded(nn.LSTM(4, 5)), padding_value=-7.0), (x, lengths)),
    Case("lstm_packed_total_length", Packed(seeded(nn.LSTM(4, 5)), batch_first=True, total_length=9, padding_value=2.5),
         (xb, lengths)),
    Case("lstm_packed_shorter", Packed(seeded(nn.LSTM(4, 5))), (x, torch.tensor([4, 4, 1]))),
    Case("gru_packed", Packed(seeded(nn.GRU(4, 5, num_layers=2, bidirectional=True))), (x, lengths)),
    Case("gru_packed_batch_first", Packed(seeded(nn.GRU(4, 5, batch_first=True)), batch_first=True,
                                          padding_value=1.0), (xb, lengths)),
    Case("rnn_tanh_packed", Packed(seeded(nn.RNN(4, 5, bidirectional=True))), (x, lengths)),
    Case("rnn_relu_packed", Packed(seeded(nn.RNN(4, 5, nonlinearity="relu"))), (x, lengths, r(1, 3, 5))),
    # ---- cells (scripted: the traced modules record the cells' arithmetic)
    Case("lstm_cell", LSTMCellScript(True), (r(2, 3), r(2, 5), r(2, 5)), script=True),
    Case("lstm_cell_no_bias", LSTMCellScript(False), (r(2, 3), r(2, 5), r(2, 5)), script=True),
    Case("gru_cell", GRUCellScript(True), (r(4, 3), r(4, 5)), script=True),
    Case("gru_cell_no_bias", GRUCellScript(False), (r(4, 3), r(4, 5)), script=True),
    Case("rnn_tanh_cell", RNNCellScript(False, True), (r(4, 3), r(4, 5)), script=True),
    Case("rnn_relu_cell", RNNCellScript(True, False), (r(4, 3), r(4, 5)), script=True),
    # ---- scripted modules: the weights come from the list attribute _flat_weights
    Case("lstm_scripted", ScriptedLSTM(seeded(nn.LSTM(4, 5, num_layers=2))), (x, r(2, 3, 5), r(2, 3, 5)),
         script=True),
    Case("lstm_scripted_bidirectional_batch_first",
         ScriptedLSTM(seeded(nn.LSTM(4, 3, bidirectional=True, batch_first=True))), (xb, r(2, 3, 3), r(2, 3, 3)),
         script=True),
    Case("gru_scripted", ScriptedRNN(seeded(nn.GRU(4, 5))), (x, r(1, 3, 5)), script=True),
    Case("gru_scripted_no_state", ScriptedRNN(seeded(nn.GRU(4, 5, num_layers=2))), (x,), script=True),
    Case("rnn_scripted", ScriptedRNN(seeded(nn.RNN(4, 5, nonlinearity="relu", num_layers=2))), (x, r(2, 3, 5)),
         script=True),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
